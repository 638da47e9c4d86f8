module goro/schedlat

go 1.19
