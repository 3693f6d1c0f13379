# In a second terminal: one long answer in the background, then the block pool's gauges.
curl -s http://127.0.0.1:8000/v1/completions -H "Content-Type: application/json" \
  -d '{"model": "Qwen/Qwen2.5-7B-Instruct-AWQ", "prompt": "Tell a long story.",
       "max_tokens": 2000, "ignore_eos": true}' > /dev/null &
sleep 5
curl -s http://127.0.0.1:8000/metrics | grep -E "^vllm:(kv_cache_usage_perc|cache_config_info)"
