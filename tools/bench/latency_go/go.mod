module goro/tools/latency-go

go 1.19
