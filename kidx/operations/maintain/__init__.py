"""Changing and keeping the store: ``apply``, ``delete``, ``diff``, ``history``, ``gc``,
``fsck``, ``push`` (``transfer``) and the bundle file format. Uses no other family."""
