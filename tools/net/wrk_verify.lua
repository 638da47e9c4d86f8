-- SPDX-License-Identifier: MIT
-- wrk script: checks every answer is 200 with the expected body
-- (WRK_EXPECT, default "Hello, World!") and prints "VERIFY bad=N" at the
-- end. Each wrk thread has a Lua state of its own: the counts are gathered
-- from them in done().
local expect = os.getenv("WRK_EXPECT") or "Hello, World!"
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
end

function response(status, headers, body)
  if status ~= 200 or body ~= expect then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do
    total = total + t:get("bad")
  end
  io.write(string.format("VERIFY bad=%d\n", total))
end
