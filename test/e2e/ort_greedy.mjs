#!/usr/bin/env node
// ort_greedy.mjs: onnxruntime's greedy token loop over a decoder exported with
// its KV cache, the reference test/e2e/generate.py compares parc-run against.
//
//   node test/e2e/ort_greedy.mjs MODEL.onnx PROMPT.npy NEW_TOKENS OUT.npy [EOS|-] [LOGITS.npy]
//
// The prompt runs in one step over an empty past (length 0), then one step per
// new token, each feeding the present.* outputs back as the past_key_values.*
// inputs and the argmax of the last logits as the next token: the usual
// Hugging Face / optimum loop, nothing of parc's. Writes the tokens
// [batch, prompt + new] as int64 .npy (after EOS, a sequence repeats EOS),
// and with LOGITS.npy each step's last-position logits [steps, batch, vocab].
// Prints TTFT (the prompt's step) and the per-token latency (p50 of the
// other steps). ORT_THREADS=T (default 1) and ORT_OPTIMIZE=1 (graph
// optimisations on) are for bench/decode.sh; the tests keep the defaults.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const refDir = join(here, '..', '..', 'tools', 'ort-reference');
const { readNpy, writeNpy } = await import(join(refDir, 'npy.mjs'));
const ort = createRequire(join(refDir, 'package.json'))('onnxruntime-node');

const [model, promptPath, newTokens, outPath, eosArg, logitsPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: ort_greedy.mjs MODEL.onnx PROMPT.npy NEW_TOKENS OUT.npy [EOS|-] [LOGITS.npy]');
  process.exit(2);
}
const eos = eosArg === undefined || eosArg === '-' ? -1n : BigInt(eosArg);
const stepLogits = [];
const threads = Number(process.env.ORT_THREADS || 1);
const session = await ort.InferenceSession.create(model, {
  executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  graphOptimizationLevel: process.env.ORT_OPTIMIZE === '1' ? 'all' : 'disabled',
  logSeverityLevel: 3,
});
const stepMs = [];
const prompt = readNpy(promptPath);
const [batch, promptLen] = prompt.shape;
const total = promptLen + Number(newTokens);
const tokens = new BigInt64Array(batch * total).fill(eos);
for (let b = 0; b < batch; b++)
  for (let t = 0; t < promptLen; t++) tokens[b * total + t] = prompt.data[b * promptLen + t];

const meta = new Map(session.inputMetadata.map((m) => [m.name, m]));
const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
let past = {};
for (const name of pastNames) {
  const shape = meta.get(name).shape.map((d, k) => (k === 0 ? batch : k === 2 ? 0 : d));
  past[name] = new ort.Tensor('float32', new Float32Array(0), shape);
}
const done = new Array(batch).fill(false);
let pos = 0;
for (let len = promptLen; pos + len <= total - 1 || (pos === 0 && len === promptLen); ) {
  const ids = new BigInt64Array(batch * len), positions = new BigInt64Array(batch * len);
  for (let b = 0; b < batch; b++)
    for (let t = 0; t < len; t++) {
      ids[b * len + t] = tokens[b * total + pos + t];
      positions[b * len + t] = BigInt(pos + t);
    }
  const feeds = {
    input_ids: new ort.Tensor('int64', ids, [batch, len]),
    position_ids: new ort.Tensor('int64', positions, [batch, len]),
    ...past,
  };
  if (session.inputNames.includes('attention_mask'))
    feeds.attention_mask = new ort.Tensor('int64', new BigInt64Array(batch * (pos + len)).fill(1n),
                                          [batch, pos + len]);
  const start = process.hrtime.bigint();
  const out = await session.run(feeds);
  stepMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  const logits = out.logits, vocab = logits.dims[2];
  pos += len;
  for (let b = 0; b < batch; b++) {
    let best = 0;
    const row = (b * len + len - 1) * vocab;
    stepLogits.push(logits.data.subarray(row, row + vocab));
    for (let v = 1; v < vocab; v++) if (logits.data[row + v] > logits.data[row + best]) best = v;
    const next = done[b] ? eos : BigInt(best);
    tokens[b * total + pos] = next;
    done[b] = done[b] || next === eos;
  }
  if (pos + 1 >= total || done.every((d) => d)) break;
  past = {};
  for (const name of pastNames) past[name] = out[name.replace('past_key_values.', 'present.')];
  len = 1;
}
writeNpy(outPath, 'int64', [batch, total], tokens);
const decode = stepMs.slice(1).sort((a, b) => a - b);
const p50 = decode.length ? decode[Math.ceil(0.5 * decode.length) - 1] : 0;
console.log(`ort: TTFT ${stepMs[0].toFixed(3)} ms, per-token latency p50 ` +
            `${p50.toFixed(3)} ms over ${decode.length} decode steps`);
if (logitsPath) {
  const vocab = stepLogits[0].length, all = new Float32Array(stepLogits.length * vocab);
  stepLogits.forEach((row, i) => all.set(row, i * vocab));
  writeNpy(logitsPath, 'float32', [stepLogits.length / batch, batch, vocab], all);
}
