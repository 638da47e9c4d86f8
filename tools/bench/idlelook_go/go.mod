module goro/tools/idlelook-go

go 1.19
