# SPDX-License-Identifier: MIT
"""The network tools: netns.py (a namespace and tap device per guest),
loadgen/ (the open-loop load generator, C), the Go peers of the servers
(httpd_go/, kvd_go/), Go's HTTP client for tests/net/check_httpd.py
(httpclient_go/), mctranscript.py (memcached's answers for kvd's test)."""
