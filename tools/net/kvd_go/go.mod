module goro/tools/net/kvd_go

go 1.19
