#!/usr/bin/env node
// ort_greedy.mjs: onnxruntime's greedy token loop over a decoder exported with
// its KV cache, the reference test/e2e/generate.py compares parc-run against.
//
//   node test/e2e/ort_greedy.mjs MODEL.onnx PROMPT.npy NEW_TOKENS OUT.npy [EOS|-] [LOGITS.npy]
//
// The prompt runs in one step over an empty past (length 0), then one step per
// new token, each feeding the present outputs back as the past inputs and the
// argmax of the last logits as the next token: the usual Hugging Face /
// optimum / onnxruntime-genai loop, nothing of parc's. The pasts are
// past_key_values.{i}.key|value (-> present.{i}.key|value) or past_{i}
// (-> present_{i}, com.microsoft Attention's stacked [2, batch, ...]); the
// integer inputs (input_ids, position_ids if declared, attention_mask if
// declared) take the type the model declares (int32 or int64), the pasts
// theirs (float32 or float16). Writes the tokens [batch, prompt + new] as
// int64 .npy (after EOS, a sequence repeats EOS), and with LOGITS.npy each
// step's last-position logits as float32 [steps, batch, vocab] (fp16 logits
// widened). EOS '-' means none (to pass LOGITS.npy without one).
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

/// An integer input of the model's declared type (int32 or int64).
function intTensor(name, values, dims) {
  const type = meta.get(name).type;
  if (type === 'int32') return new ort.Tensor('int32', Int32Array.from(values, Number), dims);
  if (type === 'int64') return new ort.Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), dims);
  throw new Error(`${model}: input '${name}' is ${type}, not int32 or int64`);
}

/// IEEE half bits to a number (logits of fp16 models).
function halfToFloat(h) {
  const e = (h >> 10) & 0x1f, m = h & 0x3ff, s = h & 0x8000 ? -1 : 1;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

const presentOf = (name) => name.startsWith('past_key_values.')
  ? name.replace('past_key_values.', 'present.') : name.replace(/^past_/, 'present_');
const pastNames = session.inputNames.filter((n) => /^(past_key_values\.|past_\d+$)/.test(n));
let past = {};
for (const name of pastNames) {
  // Symbolic dims: the first is the batch, the other the (empty) past length.
  let symbolic = 0;
  const shape = meta.get(name).shape.map((d) => (typeof d === 'number' ? d : symbolic++ ? 0 : batch));
  const type = meta.get(name).type;
  if (type !== 'float32' && type !== 'float16')
    throw new Error(`${model}: past '${name}' is ${type}, not float32 or float16`);
  past[name] = new ort.Tensor(type, type === 'float16' ? new Uint16Array(0) : new Float32Array(0),
                              shape);
}
const done = new Array(batch).fill(false);
let pos = 0;
for (let len = promptLen; pos + len <= total - 1 || (pos === 0 && len === promptLen); ) {
  const ids = [], positions = [];
  for (let b = 0; b < batch; b++)
    for (let t = 0; t < len; t++) {
      ids.push(tokens[b * total + pos + t]);
      positions.push(pos + t);
    }
  const feeds = { input_ids: intTensor('input_ids', ids, [batch, len]), ...past };
  if (meta.has('position_ids'))
    feeds.position_ids = intTensor('position_ids', positions, [batch, len]);
  if (meta.has('attention_mask'))
    feeds.attention_mask = intTensor('attention_mask', new Array(batch * (pos + len)).fill(1),
                                     [batch, pos + len]);
  const start = process.hrtime.bigint();
  const out = await session.run(feeds);
  stepMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  const logits = out.logits, vocab = logits.dims[2];
  const value = logits.type === 'float16' ? (i) => halfToFloat(logits.data[i]) : (i) => logits.data[i];
  pos += len;
  for (let b = 0; b < batch; b++) {
    let best = 0;
    const at = (b * len + len - 1) * vocab, row = new Float32Array(vocab);
    for (let v = 0; v < vocab; v++) {
      row[v] = value(at + v);
      if (row[v] > row[best]) best = v;
    }
    stepLogits.push(row);
    const next = done[b] ? eos : BigInt(best);
    tokens[b * total + pos] = next;
    done[b] = done[b] || next === eos;
  }
  if (pos + 1 >= total || done.every((d) => d)) break;
  past = {};
  for (const name of pastNames) past[name] = out[presentOf(name)];
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
