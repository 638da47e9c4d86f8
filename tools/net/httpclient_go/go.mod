module goro/tools/net/httpclient_go

go 1.19
