from vllm import LLM, SamplingParams

if __name__ == "__main__":
    llm = LLM(model="Qwen/Qwen2.5-0.5B-Instruct", max_model_len=2048)
    outputs = llm.generate(["What is a KV cache?"], SamplingParams(max_tokens=16))
    print(outputs[0].outputs[0].text)
