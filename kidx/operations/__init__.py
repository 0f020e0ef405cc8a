"""Operations: what each verb does to the store, independent of the command line."""
