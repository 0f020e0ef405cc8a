"""Reading manifests: files, folders and standard input into documents."""
