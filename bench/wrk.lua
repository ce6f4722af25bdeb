-- Makes wrk end with one JSON line: requests, seconds, errors, latency p50 and p99 in ms.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\n{"requests": %d, "seconds": %.6f, "errors": %d, "p50_ms": %.4f, "p99_ms": %.4f}\n',
    summary.requests, summary.duration / 1e6,
    e.connect + e.read + e.write + e.timeout + e.status,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
