"""Running the labs: each in its own confined process (labhost, labrun, sandbox, labipython), keyed on
what it read (labkeys, labreads, labplan), its outputs kept as Artifacts (labstore) or frozen (freeze)."""
