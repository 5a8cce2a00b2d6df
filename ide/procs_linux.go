package ide

// defaultProcesses reads /proc.
func defaultProcesses() ProcessLookup { return ProcFS("/proc") }
