"""The pages: content/ and notebooks read into Pages (content, nbpage) and their blocks, prose resolved
against the labs' results (prose), every reference checked before anything is rendered (check)."""
