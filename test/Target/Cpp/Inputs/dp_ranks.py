"""Prints a --dp compile's rank table and checks its weight mapping: every
rank reads the file of its rank in replica 0 (rank mod ranks_per_replica),
holds the weight bytes that rank holds, the files listed exist with the
sizes the manifest gives, and no other file is on disk."""
import json
import os
import sys

out = sys.argv[1]
m = json.load(open(os.path.join(out, "manifest.json")))
per = m["ranks_per_replica"]
ranks = m["ranks"]
assert len(ranks) == m["world_size"] == per * m["data_parallel"], m["world_size"]
for r in ranks:
    print(f"rank {r['rank']} replica {r['replica']} replica_rank {r['replica_rank']} "
          f"program {r['program']} weights {r['weights']}")
    first = ranks[r["rank"] % per]
    assert r["replica"] == r["rank"] // per and r["replica_rank"] == r["rank"] % per, r
    assert r["weights"] == first["weights"] == f"weights/rank{r['rank'] % per}.safetensors", r
    assert r["program"] == first["program"], r
    assert r["weight_bytes"] == first["weight_bytes"], r
    size = os.path.getsize(os.path.join(out, r["weights"]))
    assert r["weight_file_bytes"] == size, (r, size)
on_disk = sorted(os.listdir(os.path.join(out, "weights")))
assert on_disk == sorted({os.path.basename(r["weights"]) for r in ranks}), on_disk
print("weight bytes: each rank as its replica-0 rank, files as listed")
print(f"mesh {m['mesh']['axes']} {m['mesh']['shape']} world {m['world_size']} "
      f"output_rank {m['output_rank']}")
