// Minimal decoder for a serialized ONNX TensorProto (the .pb files of the ONNX
// test-data format, e.g. test_data_set_0/input_0.pb), with no protobuf
// dependency. Handles raw_data and the typed repeated fields (packed or not).
// External data, segments and string tensors are rejected with a clear error.
//
// Returns { name, dtype, shape, data } like npy.mjs's decodeNpy (float16 as raw
// bits in a Uint16Array, bool as 0/1 bytes in a Uint8Array).

import { readFileSync } from 'node:fs';

export class TensorProtoError extends Error {}

// TensorProto.DataType -> [ort type, TypedArray ctor, item size]
const DATA_TYPES = {
  1: ['float32', Float32Array, 4],
  2: ['uint8', Uint8Array, 1],
  3: ['int8', Int8Array, 1],
  4: ['uint16', Uint16Array, 2],
  5: ['int16', Int16Array, 2],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  9: ['bool', Uint8Array, 1],
  10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8],
  12: ['uint32', Uint32Array, 4],
  13: ['uint64', BigUint64Array, 8],
};
const DATA_TYPE_NAMES = {
  0: 'UNDEFINED', 8: 'STRING', 14: 'COMPLEX64', 15: 'COMPLEX128', 16: 'BFLOAT16',
  17: 'FLOAT8E4M3FN', 18: 'FLOAT8E4M3FNUZ', 19: 'FLOAT8E5M2', 20: 'FLOAT8E5M2FNUZ',
  21: 'UINT4', 22: 'INT4',
};

class Reader {
  constructor(buf, where) {
    this.buf = buf;
    this.pos = 0;
    this.where = where;
  }
  eof() {
    return this.pos >= this.buf.length;
  }
  fail(msg) {
    throw new TensorProtoError(`${this.where}: malformed TensorProto: ${msg}`);
  }
  varint() {
    // returns BigInt (unsigned 64-bit)
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) this.fail('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return BigInt.asUintN(64, result);
      shift += 7n;
    }
    this.fail('varint too long');
  }
  bytes(n) {
    if (this.pos + n > this.buf.length) this.fail('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  lengthDelimited() {
    return this.bytes(Number(this.varint()));
  }
  skip(wireType) {
    switch (wireType) {
      case 0: this.varint(); break;
      case 1: this.bytes(8); break;
      case 2: this.lengthDelimited(); break;
      case 5: this.bytes(4); break;
      default: this.fail(`unsupported wire type ${wireType}`);
    }
  }
}

// Reads a repeated scalar field occurrence (packed or not) into `out` (array).
function readRepeated(r, wireType, kind, out) {
  const one = (rr) => {
    switch (kind) {
      case 'varint': out.push(rr.varint()); break;
      case 'fixed32': out.push(rr.bytes(4)); break;
      case 'fixed64': out.push(rr.bytes(8)); break;
      default: throw new Error(kind);
    }
  };
  if (wireType === 2) {
    const sub = new Reader(r.lengthDelimited(), r.where);
    while (!sub.eof()) one(sub);
  } else {
    const expected = kind === 'varint' ? 0 : kind === 'fixed32' ? 5 : 1;
    if (wireType !== expected) r.fail(`unexpected wire type ${wireType}`);
    one(r);
  }
}

export function decodeTensorProto(buf, where = '<buffer>') {
  const r = new Reader(buf, where);
  const dims = [];
  let dataType = 0;
  let name = '';
  let raw = null;
  const floatData = [];
  const int32Data = [];
  const int64Data = [];
  const doubleData = [];
  const uint64Data = [];
  let hasStrings = false;
  let hasSegment = false;
  let dataLocation = 0;
  while (!r.eof()) {
    const key = Number(r.varint());
    const field = key >>> 3;
    const wt = key & 7;
    switch (field) {
      case 1: readRepeated(r, wt, 'varint', dims); break;
      case 2: if (wt !== 0) r.fail('bad data_type'); dataType = Number(r.varint()); break;
      case 3: hasSegment = true; r.skip(wt); break;
      case 4: readRepeated(r, wt, 'fixed32', floatData); break;
      case 5: readRepeated(r, wt, 'varint', int32Data); break;
      case 6: hasStrings = true; r.skip(wt); break;
      case 7: readRepeated(r, wt, 'varint', int64Data); break;
      case 8: if (wt !== 2) r.fail('bad name'); name = r.lengthDelimited().toString('utf8'); break;
      case 9: if (wt !== 2) r.fail('bad raw_data'); raw = r.lengthDelimited(); break;
      case 10: readRepeated(r, wt, 'fixed64', doubleData); break;
      case 11: readRepeated(r, wt, 'varint', uint64Data); break;
      case 14: if (wt !== 0) r.fail('bad data_location'); dataLocation = Number(r.varint()); break;
      default: r.skip(wt);
    }
  }
  const shape = dims.map((d) => {
    const v = BigInt.asIntN(64, d);
    if (v < 0n) throw new TensorProtoError(`${where}: negative dimension ${v} in TensorProto`);
    return Number(v);
  });
  if (hasSegment) throw new TensorProtoError(`${where}: segmented TensorProtos are not supported`);
  if (dataLocation === 1) throw new TensorProtoError(`${where}: TensorProto with external data is not supported`);
  if (hasStrings || dataType === 8) throw new TensorProtoError(`${where}: string tensors are not supported`);
  const info = DATA_TYPES[dataType];
  if (!info) {
    const n = DATA_TYPE_NAMES[dataType] ?? String(dataType);
    throw new TensorProtoError(`${where}: unsupported TensorProto data_type ${n}`);
  }
  const [dtype, ctor, itemSize] = info;
  const count = shape.reduce((a, b) => a * b, 1);
  const ab = new ArrayBuffer(count * itemSize);
  const data = new ctor(ab);
  const check = (n) => {
    if (n !== count) {
      throw new TensorProtoError(`${where}: TensorProto has ${n} elements, shape [${shape}] needs ${count}`);
    }
  };
  if (raw !== null) {
    check(raw.length / itemSize);
    new Uint8Array(ab).set(raw); // raw_data is little-endian
  } else if (dtype === 'float32') {
    check(floatData.length);
    const dv = new DataView(ab);
    floatData.forEach((b, i) => dv.setFloat32(i * 4, b.readFloatLE(0), true));
  } else if (dtype === 'float64') {
    check(doubleData.length);
    const dv = new DataView(ab);
    doubleData.forEach((b, i) => dv.setFloat64(i * 8, b.readDoubleLE(0), true));
  } else if (dtype === 'int64') {
    check(int64Data.length);
    int64Data.forEach((v, i) => { data[i] = BigInt.asIntN(64, v); });
  } else if (dtype === 'uint64') {
    check(uint64Data.length);
    uint64Data.forEach((v, i) => { data[i] = v; });
  } else if (dtype === 'uint32') {
    check(uint64Data.length);
    uint64Data.forEach((v, i) => { data[i] = Number(BigInt.asUintN(32, v)); });
  } else {
    // int32, int16, int8, uint16, uint8, bool, float16 (bits) live in int32_data
    check(int32Data.length);
    int32Data.forEach((v, i) => {
      const x = Number(BigInt.asIntN(32, v));
      data[i] = dtype === 'bool' ? (x ? 1 : 0) : x;
    });
  }
  return { name, dtype, shape, data };
}

export function readTensorProto(path) {
  return decodeTensorProto(readFileSync(path), path);
}
