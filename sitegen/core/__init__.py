"""The core: errors, the project's files and their snapshot (sources), what the build remembers (memo,
stored), YAML read with line numbers, and the lock that keeps two builds apart."""
