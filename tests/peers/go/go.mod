module goro/peers

go 1.19
