module goro/tools/knownwork-go

go 1.19
