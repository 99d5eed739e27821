// Minimal, dependency-free NumPy .npy reader/writer.
//
// Reads format versions 1.0, 2.0 and 3.0; writes 1.0 (2.0 only if the header
// would not fit in 1.0, which never happens for the plain dtypes below).
// Little-endian (or byte-order-free) data only, C order only.
//
// A decoded array is { dtype, shape, data } where dtype is an onnxruntime
// tensor type name ('float32', 'int64', ...), shape is an array of numbers and
// data is the matching typed array (float16 is kept as raw bits in a
// Uint16Array, bool as 0/1 bytes in a Uint8Array).

import { readFileSync, writeFileSync } from 'node:fs';

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

// numpy descr (without byte-order char) -> [ort type, TypedArray ctor, item size]
const DESCR_TABLE = {
  f4: ['float32', Float32Array, 4],
  f8: ['float64', Float64Array, 8],
  f2: ['float16', Uint16Array, 2],
  i8: ['int64', BigInt64Array, 8],
  u8: ['uint64', BigUint64Array, 8],
  i4: ['int32', Int32Array, 4],
  u4: ['uint32', Uint32Array, 4],
  i2: ['int16', Int16Array, 2],
  u2: ['uint16', Uint16Array, 2],
  i1: ['int8', Int8Array, 1],
  u1: ['uint8', Uint8Array, 1],
  b1: ['bool', Uint8Array, 1],
};

// ort type -> numpy descr used when writing
const WRITE_DESCR = {
  float32: '<f4',
  float64: '<f8',
  float16: '<f2',
  int64: '<i8',
  uint64: '<u8',
  int32: '<i4',
  uint32: '<u4',
  int16: '<i2',
  uint16: '<u2',
  int8: '|i1',
  uint8: '|u1',
  bool: '|b1',
};

export const SUPPORTED_DTYPES = Object.keys(WRITE_DESCR);

export class NpyError extends Error {}

function typedArrayFor(dtype) {
  for (const [, [t, ctor, size]] of Object.entries(DESCR_TABLE)) {
    if (t === dtype) return [ctor, size];
  }
  throw new NpyError(`unsupported dtype '${dtype}'`);
}

// Parses the Python dict literal of an .npy header, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
function parseHeader(text, where) {
  const descrM = /['"]descr['"]\s*:\s*(['"])([^'"]*)\1/.exec(text);
  const fortM = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(text);
  const shapeM = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text);
  if (!descrM) {
    if (/['"]descr['"]\s*:\s*\[/.test(text)) {
      throw new NpyError(`${where}: structured/record dtypes are not supported (header: ${text.trim()})`);
    }
    throw new NpyError(`${where}: malformed .npy header, no 'descr' (header: ${text.trim()})`);
  }
  if (!fortM || !shapeM) {
    throw new NpyError(`${where}: malformed .npy header (header: ${text.trim()})`);
  }
  const shape = shapeM[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => {
      const v = Number(s.replace(/L$/, ''));
      if (!Number.isInteger(v) || v < 0) {
        throw new NpyError(`${where}: bad dimension '${s}' in .npy shape`);
      }
      return v;
    });
  return { descr: descrM[2], fortranOrder: fortM[1] === 'True', shape };
}

export function decodeNpy(buf, where = '<buffer>') {
  if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) {
    throw new NpyError(`${where}: not a .npy file (bad magic)`);
  }
  const major = buf[6];
  const minor = buf[7];
  let headerLen;
  let headerStart;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    headerStart = 10;
  } else if (major === 2 || major === 3) {
    if (buf.length < 12) throw new NpyError(`${where}: truncated .npy header`);
    headerLen = buf.readUInt32LE(8);
    headerStart = 12;
  } else {
    throw new NpyError(`${where}: unsupported .npy format version ${major}.${minor}`);
  }
  const dataStart = headerStart + headerLen;
  if (dataStart > buf.length) throw new NpyError(`${where}: truncated .npy header`);
  const headerText = buf.toString(major === 3 ? 'utf8' : 'latin1', headerStart, dataStart);
  const { descr, fortranOrder, shape } = parseHeader(headerText, where);

  const order = descr[0];
  const code = descr.slice(1);
  if (!'<>|='.includes(order) || !(code in DESCR_TABLE)) {
    throw new NpyError(
      `${where}: unsupported .npy dtype '${descr}' (supported: ${Object.values(WRITE_DESCR).join(' ')})`,
    );
  }
  const [dtype, ctor, itemSize] = DESCR_TABLE[code];
  if (order === '>' && itemSize > 1) {
    throw new NpyError(`${where}: big-endian data ('${descr}') is not supported; save it little-endian`);
  }
  if (fortranOrder && shape.length > 1) {
    // A 0-d or 1-d array is the same in both orders; anything else is not.
    throw new NpyError(
      `${where}: Fortran-order arrays are not supported; save with np.ascontiguousarray(a) (C order)`,
    );
  }
  const count = shape.reduce((a, b) => a * b, 1);
  const nbytes = count * itemSize;
  if (buf.length - dataStart < nbytes) {
    throw new NpyError(
      `${where}: truncated .npy data: need ${nbytes} bytes for shape [${shape}] ${dtype}, have ${buf.length - dataStart}`,
    );
  }
  // Copy into a fresh, aligned ArrayBuffer (the data offset need not be aligned).
  const ab = new ArrayBuffer(nbytes);
  new Uint8Array(ab).set(buf.subarray(dataStart, dataStart + nbytes));
  const data = new ctor(ab);
  return { dtype, shape, data };
}

export function readNpy(path) {
  return decodeNpy(readFileSync(path), path);
}

export function encodeNpy(dtype, shape, data) {
  const descr = WRITE_DESCR[dtype];
  if (!descr) throw new NpyError(`cannot write dtype '${dtype}' to .npy`);
  const [ctor, itemSize] = typedArrayFor(dtype);
  const count = shape.reduce((a, b) => a * b, 1);
  if (data.length !== count) {
    throw new NpyError(`data length ${data.length} does not match shape [${shape}]`);
  }
  const shapeStr = shape.length === 0 ? '()' : shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  // Pad with spaces so that magic + version + len + header is a multiple of 64,
  // header terminated by '\n' (as numpy does).
  let version = 1;
  let prefix = 10;
  let total = Math.ceil((prefix + dict.length + 1) / 64) * 64;
  if (total - prefix > 0xffff) {
    version = 2;
    prefix = 12;
    total = Math.ceil((prefix + dict.length + 1) / 64) * 64;
  }
  const header = dict + ' '.repeat(total - prefix - dict.length - 1) + '\n';
  const out = Buffer.alloc(total + count * itemSize);
  MAGIC.copy(out, 0);
  out[6] = version;
  out[7] = 0;
  if (version === 1) out.writeUInt16LE(header.length, 8);
  else out.writeUInt32LE(header.length, 8);
  out.write(header, prefix, 'latin1');
  let typed = data;
  if (!(typed instanceof ctor)) {
    // e.g. a plain array, or bool data handed over as another byte view
    typed = ctor.from(data);
  }
  const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  out.set(bytes, total);
  if (dtype === 'bool') {
    for (let i = total; i < out.length; i++) out[i] = out[i] ? 1 : 0;
  }
  return out;
}

export function writeNpy(path, dtype, shape, data) {
  writeFileSync(path, encodeNpy(dtype, shape, data));
}
