"""Four RTX 4090s serving Qwen2.5-7B-Instruct (BF16): as four ordinary replicas
(aggregated, chunked prefill), or split into x prefill and y decode instances (xPyD),
the prompt's KV crossing a link between them. Goodput under a TTFT and a TPOT SLO for
a sweep of request rates: which one serves more requests within both, at which rate.

Aggregated is lesson 6's performance model (perf_model.serve: lesson 3's scheduler on
lesson 5's prefix cache, steps timed by lesson 3's roofline) on each replica, the
requests dealt round robin. Split, each prefill instance is perf_model.serve with
max_tokens=1, as the proxy sends it; the KV then takes kv_transfer.transfer_seconds
over the link; each decode instance is a router.Replica whose prefix cache holds the
prompt's blocks (what the connector writes) from the request's arrival until it is
done, so that it computes only the last partial block (vLLM computes one token:
remote_kv.py; the difference is at most 15 tokens of a decode step). Its first token
is the client's first token. Workload: lesson 6's (1,024 prompt tokens, 128 output
tokens, Poisson arrivals). Every time and rate is an estimate, and the step times are
lower bounds (lesson 1's measured_share.py: real steps run at about 60% of the
bound's speed).
"""

from kv_transfer import LINKS, transfer_seconds
from perf_model import INPUT_LEN, OUTPUT_LEN, arrivals, serve
from router import BLOCK_SIZE, Replica, drive
from scheduler import Request
from serving_metrics import goodput, percentile, request_metrics

GPUS = 4
SLOS = {"ttft": 1000, "tpot": 25}  # ms, as vllm bench serve --goodput takes them
RATES = (8.0, 16.0, 24.0, 32.0)  # requests per second, all four GPUs together
LAYOUTS = ("4 aggregated", "1P3D", "2P2D", "3P1D")
LINK = "RDMA 100 Gb/s"  # kv_transfer.LINKS (an estimate)
COUNT = 100  # requests per run


def aggregated(sent: list[float]) -> tuple[list[dict], float]:
    """GPUS replicas, every GPUS-th request to each: lesson 6's model on each."""
    requests: list[dict] = [{}] * len(sent)
    end = 0.0
    for g in range(GPUS):
        mine = list(range(g, len(sent), GPUS))
        metrics, duration = serve([sent[i] for i in mine])
        for i, m in zip(mine, metrics):
            requests[i] = m
        end = max(end, duration)
    return requests, end


def prompt_of(i: int) -> tuple[int, ...]:
    """Request i's prompt: token ids no other request's prompt holds."""
    return tuple(range(1000 + i * INPUT_LEN, 1000 + (i + 1) * INPUT_LEN))


def split(
    sent: list[float], prefill: int, link: float = LINKS[LINK]
) -> tuple[list[dict], float]:
    """prefill instances, GPUS - prefill decode instances, the KV over `link`."""
    decode = GPUS - prefill
    if not 0 < prefill < GPUS:
        raise ValueError(f"prefill must be from 1 to {GPUS - 1}, got {prefill}")
    ready = []  # (time the KV is on the decode side, request)
    for p in range(prefill):
        mine = list(range(p, len(sent), prefill))
        metrics, _ = serve([sent[i] for i in mine], output_len=1)
        for i, m in zip(mine, metrics):
            ready.append((sent[i] + m["ttft"] + transfer_seconds(INPUT_LEN, link), i))
    replicas = [Replica(f"D{d}") for d in range(decode)]
    placed = {}

    def arrive(item):
        at, i = item
        replica = replicas[i % decode]
        # The connector has written the prompt's KV into blocks of the decode instance,
        # which hold it until the request is done (WAITING_FOR_REMOTE_KVS, then cached).
        replica.cache.allocate_slots(f"kv{i}", prompt_of(i), 0, INPUT_LEN)
        replica.add(Request(f"r{i}", INPUT_LEN, OUTPUT_LEN, prompt=prompt_of(i)), at)
        placed[i] = replica

    def finished(replica, request_id):
        replica.cache.free("kv" + request_id[1:])

    drive(replicas, ready, arrive, finished)
    requests = [
        request_metrics(t, placed[i].tokens[f"r{i}"]) for i, t in enumerate(sent)
    ]
    return requests, max(r.now for r in replicas)


def run(layout: str, rate: float, link: float = LINKS[LINK]) -> dict:
    sent = arrivals(rate, COUNT)
    if layout == LAYOUTS[0]:
        requests, duration = aggregated(sent)
    else:
        requests, duration = split(sent, int(layout[0]), link)
    tpots = [r["tpot"] for r in requests]
    return {
        "goodput": goodput(requests, SLOS, duration),
        "ttft_p90": percentile([r["ttft"] for r in requests], 90),
        "tpot_p90": percentile(tpots, 90),
    }


if __name__ == "__main__":
    print(f"{GPUS} GPUs, {COUNT} requests of {INPUT_LEN} + {OUTPUT_LEN} tokens;"
          f" SLOs {SLOS} ms; KV over {LINK} (block size {BLOCK_SIZE})")  # fmt: skip
    print("goodput, req/s (and p90 TTFT / p90 TPOT, ms); all estimates")
    print("rate    " + "".join(f"{layout:>22}" for layout in LAYOUTS))
    crossover = None
    for rate in RATES:
        results = {layout: run(layout, rate) for layout in LAYOUTS}
        cells = "".join(
            f"{r['goodput']:>8.2f} ({r['ttft_p90'] * 1e3:>5.0f}/"
            f"{r['tpot_p90'] * 1e3:>3.0f})"
            for r in results.values()
        )
        print(f"{rate:>4g}    {cells}")
        best = max(LAYOUTS, key=lambda k: results[k]["goodput"])
        if crossover is None and best != LAYOUTS[0]:
            crossover = (rate, best)
    if crossover:
        rate, layout = crossover
        slow = run(layout, rate, LINKS["10 GbE TCP"])
        print(
            f"{layout} at {rate:g} req/s with the KV over 10 GbE TCP instead:"
            f" goodput {slow['goodput']:.2f} req/s,"
            f" p90 TTFT {slow['ttft_p90'] * 1e3:.0f} ms"
        )
        print(
            f"the split first serves more within the SLOs at {crossover[0]:g} req/s"
            f" ({crossover[1]}); below it, four aggregated replicas do as well or"
            " better"
        )
    else:
        print("four aggregated replicas serve the most at every rate of the sweep")
