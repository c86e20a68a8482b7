#!/usr/bin/env python3
"""Writes the small hand-made test files of tests/data (run from this folder).
Only the Python standard library: struct, json, zipfile. The value sets and
the counts expected from them are derived by hand in tests/check_io.c and
tests/check_mpanalyze.sh."""
import json, struct, zipfile, io

def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]

# the boundary set B (binary32), in this order
B = [0.0, -0.0, 1.0, 65504.0, 65520.0 - 2**-8, 65520.0, -65520.0,
     2.0**-25, 2.0**-25 + 2.0**-48, 2.0**-24, 2.0**-14 - 2.0**-25, 2.0**-14,
     464.0, 464.0 + 2.0**-15, 448.0, 61440.0, 61440.0 - 2.0**-8,
     float('inf'), float('nan'), f32(-1e-30)]
# fp16 set (bits are exact fp16 values)
H = [0.0, 1.0, 2.0**-24, 2.0**-14, 448.0, 464.0, 480.0, 57344.0, 61440.0, 65504.0, float('-inf'), float('nan')]
BF16_BITS = [0x3F80, 0x0001, 0x0080, 0x7F7F, 0x4780, 0x477F]
E4M3_BYTES = [0x00, 0x01, 0x08, 0x7E, 0x7F, 0x80]

def npy_bytes(descr, shape, data, version=1, fortran=False):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, 'True' if fortran else 'False', ''.join('%d, ' % s for s in shape).rstrip(' ') if len(shape) != 1 else '%d,' % shape[0])
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(d) + 1) % 64) % 64
    h = (d + ' ' * pad + '\n').encode('latin1' if version < 3 else 'utf8')
    ln = struct.pack('<H', len(h)) if version == 1 else struct.pack('<I', len(h))
    return b'\x93NUMPY' + bytes([version, 0]) + ln + h + data

def w(name, b):
    open(name, 'wb').write(b)

pB = struct.pack('<%df' % len(B), *B)
pH = struct.pack('<%de' % len(H), *H)
w('boundary.npy', npy_bytes('<f4', [len(B)], pB))
w('boundary_be_v2.npy', npy_bytes('>f4', [4, 5], struct.pack('>%df' % len(B), *B), version=2))
w('boundary_f8_v3_fortran.npy', npy_bytes('<f8', [5, 4], struct.pack('<%dd' % len(B), *B), version=3, fortran=True))
w('boundary.bin', pB)
with open('boundary.csv', 'w') as f:
    f.write('# the boundary set, as hexadecimal floats (exact)\n')
    for i in range(0, len(B), 5):
        f.write(', '.join(float.hex(x) if x == x and abs(x) != float('inf') else repr(x) for x in B[i:i + 5]) + '\n')
w('half.npy', npy_bytes('<f2', [len(H)], pH))
w('bf16.npy', npy_bytes('|V2', [2, 3], struct.pack('<6H', *BF16_BITS)))
w('e4m3.npy', npy_bytes('|V1', [6], bytes(E4M3_BYTES)))

def st_bytes(entries, meta=None, raw_header=None):
    """entries: list of (name, dtype, shape, data)"""
    hdr, off, blob = {}, 0, b''
    if meta is not None:
        hdr['__metadata__'] = meta
    for name, dt, shape, data in entries:
        hdr[name] = {'dtype': dt, 'shape': shape, 'data_offsets': [off, off + len(data)]}
        off += len(data)
        blob += data
    h = raw_header if raw_header is not None else json.dumps(hdr).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    return struct.pack('<Q', len(h)) + h + blob

E5M2_BYTES = [0x00, 0x01, 0x04, 0x7B, 0x7C, 0x7E]   # 0, 2^-16, 2^-14, 57344, inf, nan
w('model.safetensors', st_bytes([
    ('b.f32', 'F32', [len(B)], pB),
    ('a.f16', 'F16', [len(H)], pH),
    ('c.bf16', 'BF16', [2, 3], struct.pack('<6H', *BF16_BITS)),
    ('d.e4m3', 'F8_E4M3', [6], bytes(E4M3_BYTES)),
    ('e.e5m2', 'F8_E5M2', [6], bytes(E5M2_BYTES)),
    ('f.f64', 'F64', [len(B)], struct.pack('<%dd' % len(B), *B)),
    ('g.step', 'I64', [1], struct.pack('<q', 7)),
], meta={'format': 'pt'}))

def npz(name, members, compression, force64=False):
    with zipfile.ZipFile(name, 'w', compression) as z:
        for mname, data in members:
            with z.open(mname, 'w', force_zip64=force64) as m:
                m.write(data)

npz('grads.npz', [('boundary.npy', npy_bytes('<f4', [len(B)], pB)), ('half.npy', npy_bytes('<f2', [len(H)], pH))],
    zipfile.ZIP_DEFLATED)
npz('stored.npz', [('boundary.npy', npy_bytes('<f4', [len(B)], pB))], zipfile.ZIP_STORED)
npz('zip64.npz', [('boundary.npy', npy_bytes('<f4', [len(B)], pB))], zipfile.ZIP_DEFLATED, force64=True)

# ------------------------------------------------------------------ hostile files
good = npy_bytes('<f4', [len(B)], pB)
w('hostile/truncated.npy', good[:len(good) - 7])
w('hostile/header_only.npy', good[:9])
hb = bytearray(good); hb[8:10] = struct.pack('<H', 60000); w('hostile/header_past_eof.npy', bytes(hb))
w('hostile/shape_mismatch.npy', npy_bytes('<f4', [len(B) + 1], pB))
w('hostile/huge_shape.npy', npy_bytes('<f4', [2**40, 2**40], pB))
w('hostile/bad_dict.npy', good[:10] + b"{'descr': '<f4', 'fortran_order': False, 'shape': (20,), 'extra': 1}  \n" + pB)
w('hostile/bad_descr.npy', npy_bytes('<c16', [1], b'\0' * 16))
w('hostile/v1_no_dtype.npy', npy_bytes('|V2', [6], struct.pack('<6H', *BF16_BITS)))
w('hostile/st_overlap.safetensors', st_bytes([], raw_header=json.dumps({
    'a': {'dtype': 'F32', 'shape': [4], 'data_offsets': [0, 16]},
    'b': {'dtype': 'F32', 'shape': [4], 'data_offsets': [8, 24]}}).encode()) + b'\0' * 24)
w('hostile/st_out_of_range.safetensors', st_bytes([], raw_header=json.dumps({
    'a': {'dtype': 'F32', 'shape': [4], 'data_offsets': [0, 16]}}).encode()) + b'\0' * 8)
w('hostile/st_size_mismatch.safetensors', st_bytes([], raw_header=json.dumps({
    'a': {'dtype': 'F32', 'shape': [5], 'data_offsets': [0, 16]}}).encode()) + b'\0' * 16)
w('hostile/st_huge_shape.safetensors', st_bytes([], raw_header=json.dumps({
    'a': {'dtype': 'F32', 'shape': [2**31, 2**31, 2**31], 'data_offsets': [0, 16]}}).encode()) + b'\0' * 16)
w('hostile/st_header_past_eof.safetensors', struct.pack('<Q', 10**9) + b'{}      ')
w('hostile/st_header_huge.safetensors', struct.pack('<Q', 2**63) + b'{}')
w('hostile/st_not_json.safetensors', st_bytes([], raw_header=b'{"a": {"dtype": "F32", "shape": [1]'))
w('hostile/st_nonutf8.safetensors', st_bytes([], raw_header=b'{"a\xff\xfe": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}') + b'\0' * 4)
w('hostile/st_negative.safetensors', st_bytes([], raw_header=json.dumps({
    'a': {'dtype': 'F32', 'shape': [-1], 'data_offsets': [0, 4]}}).encode()) + b'\0' * 4)
w('hostile/st_short.safetensors', b'\x10\x00\x00')
# zip bomb: a member that claims to inflate to 1 TiB from a few bytes
buf = io.BytesIO()
with zipfile.ZipFile(buf, 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('x.npy', npy_bytes('<f4', [4], b'\0' * 16))
zb = bytearray(buf.getvalue())
# patch the central directory's uncompressed size (offset 24 in the entry)
cd = zb.rfind(b'PK\x01\x02')
zb[cd + 24:cd + 28] = struct.pack('<I', 0xFFFFFFF0)
lh = zb.find(b'PK\x03\x04')
zb[lh + 22:lh + 26] = struct.pack('<I', 0xFFFFFFF0)
w('hostile/zip_bomb.npz', bytes(zb))
# a member whose declared size is smaller than what really inflates
buf = io.BytesIO()
with zipfile.ZipFile(buf, 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('y.npy', npy_bytes('<f4', [4], b'\0' * 16) + b'\0' * 4096)
zl = bytearray(buf.getvalue())
real = len(npy_bytes('<f4', [4], b'\0' * 16))
lh = zl.find(b'PK\x03\x04'); zl[lh + 22:lh + 26] = struct.pack('<I', real)
cd = zl.rfind(b'PK\x01\x02'); zl[cd + 24:cd + 28] = struct.pack('<I', real)
w('hostile/zip_longer.npz', bytes(zl))
buf = io.BytesIO()
with zipfile.ZipFile(buf, 'w', zipfile.ZIP_STORED) as z:
    z.writestr('zX.npy', good)
w('hostile/zip_nonutf8.npz', buf.getvalue().replace(b'zX.npy', b'z\xff.npy'))
w('hostile/zip_truncated.npz', good_zip[:len(good_zip) // 2] if (good_zip := open('grads.npz', 'rb').read()) else b'')
w('hostile/zip_not_npy.npz', (lambda b: b.getvalue())((lambda b: (zipfile.ZipFile(b, 'w').writestr('readme.txt', 'hi'), b)[1])(io.BytesIO())))
w('hostile/bad_token.csv', b'1.0, 2.0\n3.0, abc\n')
w('hostile/binary.csv', b'1.0\x00\x01\x02')
w('hostile/odd_size.bin', pB[:-1])

# ------------------------------------------------------------------ mixed containers (issue 15)
# members that hold no floating-point data are skipped and named; untyped or
# integer members holding bf16/fp8 bit patterns are read with a per-member dtype
MIXED_W = [1.0, 2.0**-25, 70000.0, 2.0**-20]
pW = struct.pack('<4f', *MIXED_W)
npz('mixed.npz', [('w.npy', npy_bytes('<f4', [4], pW)),
                  ('step.npy', npy_bytes('<i8', [], struct.pack('<q', 7))),
                  ('mask.npy', npy_bytes('|b1', [3], bytes([1, 0, 1]))),
                  ('act.npy', npy_bytes('|V2', [2, 3], struct.pack('<6H', *BF16_BITS))),
                  ('q.npy', npy_bytes('|u1', [6], bytes(E4M3_BYTES)))], zipfile.ZIP_STORED)
w('mixed.safetensors', st_bytes([
    ('w', 'F32', [4], pW),
    ('act', 'U16', [2, 3], struct.pack('<6H', *BF16_BITS)),
    ('h', 'F16', [2], struct.pack('<2e', 1.0, 2.0**-24)),
    ('step', 'I64', [1], struct.pack('<q', 7)),
    ('mask', 'BOOL', [3], bytes([1, 0, 1])),
]))
