#!/usr/bin/env node
// ort-run.mjs: run an ONNX model with onnxruntime (CPU) and write every output as
// .npy, to produce expected outputs for parc's differential tests.
//
//   node tools/ort-reference/ort-run.mjs model.onnx \
//       --input name=path.npy [--input name=path.pb ...] --output-dir DIR \
//       [--threads N] [--opt all|extended|basic|disabled] [--repeat N [--warmup W]]
//
// See README.md in this folder. Exit status: 0 ok, 2 usage error, 1 any other error.

import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { NpyError, SUPPORTED_DTYPES, readNpy, writeNpy } from './npy.mjs';
import { TensorProtoError, readTensorProto } from './tensorproto.mjs';

const USAGE = `usage: node ort-run.mjs MODEL.onnx --input NAME=PATH [--input NAME=PATH ...]
                   --output-dir DIR [options]

  --input NAME=PATH   feed model input NAME from PATH (.npy, or an ONNX TensorProto .pb);
                      repeat once per model input
  --output-dir DIR    write each output to DIR/<output name>.npy (name escaped as
                      parc does: bytes outside [A-Za-z0-9._-], '%' and a leading
                      '.' become %XX); optional with --repeat
  --threads N         intra-op threads (default 1; inter-op is always 1, sequential)
  --opt LEVEL         graph optimization level: all (default), extended, basic, disabled
  --repeat N          after the reference run, time N session.run calls and print
                      'ort latency ms: min=... median=...'
  --warmup W          untimed runs before the timed ones (default 1; only with --repeat)
  -h, --help          show this help`;

class UsageError extends Error {}
class RunError extends Error {}

function parseIntArg(flag, value, min) {
  if (value === undefined) throw new UsageError(`${flag} needs a value`);
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw new UsageError(`${flag} expects an integer >= ${min}, got '${value}'`);
  }
  return Number(value);
}

function parseArgs(argv) {
  const opts = { model: null, inputs: [], outputDir: null, threads: 1, opt: 'all', repeat: 0, warmup: null };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inlineValue;
    if (a.startsWith('--') && a.includes('=') && a !== '--') {
      const eq = a.indexOf('=');
      inlineValue = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const value = () => {
      if (inlineValue !== undefined) return inlineValue;
      i++;
      if (i >= argv.length) throw new UsageError(`${a} needs a value`);
      return argv[i];
    };
    switch (a) {
      case '-h':
      case '--help':
        opts.help = true;
        break;
      case '--input': {
        const spec = value();
        const eq = spec.indexOf('=');
        if (eq <= 0 || eq === spec.length - 1) {
          throw new UsageError(`bad --input spec '${spec}': expected NAME=PATH (e.g. --input x=x.npy)`);
        }
        const name = spec.slice(0, eq);
        const path = spec.slice(eq + 1);
        if (opts.inputs.some((inp) => inp.name === name)) {
          throw new UsageError(`input '${name}' given more than once`);
        }
        opts.inputs.push({ name, path });
        break;
      }
      case '--output-dir':
        opts.outputDir = value();
        break;
      case '--threads':
        opts.threads = parseIntArg(a, value(), 1);
        break;
      case '--opt': {
        const v = value();
        if (!['all', 'extended', 'basic', 'disabled'].includes(v)) {
          throw new UsageError(`--opt expects all|extended|basic|disabled, got '${v}'`);
        }
        opts.opt = v;
        break;
      }
      case '--repeat':
        opts.repeat = parseIntArg(a, value(), 1);
        break;
      case '--warmup':
        opts.warmup = parseIntArg(a, value(), 0);
        break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown option '${a}'`);
        if (opts.model !== null) throw new UsageError(`more than one model given ('${opts.model}', '${a}')`);
        opts.model = a;
    }
  }
  if (opts.help) return opts;
  if (opts.model === null) throw new UsageError('no model given');
  if (opts.outputDir === null && opts.repeat === 0) throw new UsageError('--output-dir is required');
  if (opts.warmup !== null && opts.repeat === 0) throw new UsageError('--warmup needs --repeat');
  if (opts.warmup === null) opts.warmup = 1;
  return opts;
}

// The file of an output: parc's map (runtime/src/io/formats.cpp), so that
// a manifest's "file" names the reference output too. UTF-8 bytes outside
// [A-Za-z0-9._-], '%' and a leading '.' become %XX; '' becomes '%'.
function outputFileName(name) {
  if (name === '') return '%.npy';
  let s = '';
  const bytes = new TextEncoder().encode(name);
  bytes.forEach((b, i) => {
    const c = String.fromCharCode(b);
    const keep = /[A-Za-z0-9_-]/.test(c) || (c === '.' && i > 0);
    s += keep ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  });
  return `${s}.npy`;
}

function readInputFile(path) {
  if (!existsSync(path)) throw new RunError(`input file not found: ${path}`);
  if (!statSync(path).isFile()) throw new RunError(`input path is not a file: ${path}`);
  if (path.toLowerCase().endsWith('.pb')) return readTensorProto(path);
  return readNpy(path);
}

function fmtShape(shape) {
  return `[${shape.join(',')}]`;
}

async function loadOrt() {
  try {
    const require = createRequire(import.meta.url);
    return require('onnxruntime-node');
  } catch (e) {
    throw new RunError(
      `cannot load onnxruntime-node (${e.message.split('\n')[0]}); run tools/ort-reference/install.sh first`,
    );
  }
}

function median(sorted) {
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

async function main(argv) {
  const opts = parseArgs(argv);
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  if (!existsSync(opts.model)) throw new RunError(`model file not found: ${opts.model}`);
  if (!statSync(opts.model).isFile()) throw new RunError(`model path is not a file: ${opts.model}`);

  // Read all inputs first so that file errors come before the (slower) session creation.
  const loaded = opts.inputs.map(({ name, path }) => ({ name, path, ...readInputFile(path) }));

  const ort = await loadOrt();
  let session;
  try {
    session = await ort.InferenceSession.create(opts.model, {
      executionProviders: ['cpu'],
      intraOpNumThreads: opts.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: opts.opt,
      logSeverityLevel: 3,
    });
  } catch (e) {
    throw new RunError(`failed to load model ${opts.model}: ${e.message}`);
  }

  const inputNames = session.inputNames;
  const meta = new Map((session.inputMetadata ?? []).map((m) => [m.name, m]));
  const describe = (n) => {
    const m = meta.get(n);
    return m && m.isTensor ? `${n} (${m.type} [${m.shape.join(',')}])` : n;
  };
  const modelInputs = `model inputs: ${inputNames.map(describe).join(', ')}`;

  const feeds = {};
  for (const inp of loaded) {
    if (!inputNames.includes(inp.name)) {
      throw new RunError(`model has no input named '${inp.name}' (from --input ${inp.name}=${inp.path}); ${modelInputs}`);
    }
    const m = meta.get(inp.name);
    if (m && m.isTensor === false) {
      throw new RunError(`model input '${inp.name}' is not a tensor; only tensor inputs are supported`);
    }
    if (m && m.isTensor) {
      if (m.type !== inp.dtype) {
        throw new RunError(
          `dtype mismatch for input '${inp.name}': model expects ${m.type}, ${inp.path} holds ${inp.dtype}`,
        );
      }
      const shp = m.shape;
      if (shp.length > 0) {
        const bad =
          shp.length !== inp.shape.length ||
          shp.some((d, k) => typeof d === 'number' && d >= 0 && d !== inp.shape[k]);
        if (bad) {
          throw new RunError(
            `shape mismatch for input '${inp.name}': model expects [${shp.join(',')}], ${inp.path} holds ${fmtShape(inp.shape)}`,
          );
        }
      }
    }
    feeds[inp.name] = new ort.Tensor(inp.dtype, inp.data, inp.shape);
  }
  const missing = inputNames.filter((n) => !(n in feeds));
  if (missing.length > 0) {
    throw new RunError(`no --input given for model input(s) ${missing.join(', ')}; ${modelInputs}`);
  }

  const run = async () => {
    try {
      return await session.run(feeds);
    } catch (e) {
      throw new RunError(`session.run failed: ${e.message}`);
    }
  };

  if (opts.outputDir !== null) {
    const results = await run();
    mkdirSync(opts.outputDir, { recursive: true });
    for (const name of session.outputNames) {
      const t = results[name];
      if (!t || typeof t !== 'object' || !('dims' in t) || !('type' in t)) {
        throw new RunError(`output '${name}' is not a tensor; only tensor outputs are supported`);
      }
      if (!SUPPORTED_DTYPES.includes(t.type)) {
        throw new RunError(`output '${name}' has dtype ${t.type}, which cannot be written as .npy here`);
      }
      const file = join(opts.outputDir, outputFileName(name));
      const dims = Array.from(t.dims, Number);
      writeNpy(file, t.type, dims, t.data);
      console.log(`output ${name}: ${t.type} ${fmtShape(dims)} -> ${file}`);
    }
  }

  if (opts.repeat > 0) {
    for (let i = 0; i < opts.warmup; i++) await run();
    const times = [];
    for (let i = 0; i < opts.repeat; i++) {
      const t0 = performance.now();
      await run();
      times.push(performance.now() - t0);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    const f = (x) => x.toFixed(4);
    console.log(
      `ort latency ms: min=${f(sorted[0])} median=${f(median(sorted))} mean=${f(mean)} max=${f(sorted.at(-1))} ` +
        `(runs=${opts.repeat} warmup=${opts.warmup} threads=${opts.threads} opt=${opts.opt})`,
    );
  }
  await session.release?.();
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    if (e instanceof UsageError) {
      console.error(`ort-run: error: ${e.message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (e instanceof RunError || e instanceof NpyError || e instanceof TensorProtoError) {
      console.error(`ort-run: error: ${e.message}`);
    } else {
      console.error(`ort-run: error: ${e && e.stack ? e.stack : e}`);
    }
    process.exit(1);
  },
);
