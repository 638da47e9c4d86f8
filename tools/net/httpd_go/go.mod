module goro/tools/net/httpd_go

go 1.19
