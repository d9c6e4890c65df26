/**
 * A payment's QR code as a PNG data URL: qrcode's symbol (error correction M, 4-pixel modules, a
 * 4-module quiet zone) written as a 1-bit grayscale PNG with Node's zlib, the same pixels as
 * qrcode's own renderer in a third of the bytes. The mask is chosen here: the symbol is asked for
 * with mask 0, each of the 8 masks derived by XOR, and all scored at once with qrcode's own
 * penalties (ISO 18004 N1..N4 as qrcode computes them), keeping the first lowest as getBestMask
 * does. Scanners and recorded images must not change: test/payments/qr-mask.test.ts checks the
 * penalties, mask, modules and PNG bytes against qrcode's choice on 3,000 payloads.
 */
import { crc32, deflateSync } from 'node:zlib';
import QRCode, { type QRCodeMaskPattern } from 'qrcode';

export const QR_MODULE_PX = 4;
export const QR_MARGIN_MODULES = 4;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** A square 1-bit grayscale PNG of `size` x `size` modules, `dark(row, col)` black, scaled and framed. */
export function modulesPng(size: number, dark: (row: number, col: number) => boolean): Buffer {
  const px = (size + 2 * QR_MARGIN_MODULES) * QR_MODULE_PX;
  const rowBytes = Math.ceil(px / 8);
  const raw = Buffer.alloc((rowBytes + 1) * px, 0); // each row: filter type 0, then the bits (1 = white)
  // one row of pixels per row of modules, each module decided once, then the row repeated
  const line = Buffer.alloc(rowBytes + 1);
  const modulesAcross = px / QR_MODULE_PX;
  for (let mr = 0; mr < modulesAcross; mr++) {
    line.fill(0);
    const r = mr - QR_MARGIN_MODULES;
    for (let mc = 0; mc < modulesAcross; mc++) {
      const c = mc - QR_MARGIN_MODULES;
      if (r >= 0 && r < size && c >= 0 && c < size && dark(r, c)) continue;
      for (let x = mc * QR_MODULE_PX; x < (mc + 1) * QR_MODULE_PX; x++) line[1 + (x >> 3)] |= 0x80 >> (x & 7);
    }
    for (let k = 0; k < QR_MODULE_PX; k++) line.copy(raw, (mr * QR_MODULE_PX + k) * (rowBytes + 1));
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(px, 0);
  ihdr.writeUInt32BE(px, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale; compression, filter and interlace 0
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * Per symbol size (that is, per version), bit p of each module: what XOR turns qrcode's mask-0
 * symbol into its mask-p symbol (the mask on data modules, the format bits for (M, p); the
 * function patterns and version info do not depend on the mask). Taken from qrcode's own symbols
 * of a one-digit payload at that version, so no mask formula or format table is restated here.
 */
const maskBitsBySize = new Map<number, Uint8Array>();

function maskBits(size: number): Uint8Array {
  let bits = maskBitsBySize.get(size);
  if (bits) return bits;
  const version = (size - 17) / 4;
  const withMask = (maskPattern: QRCodeMaskPattern) =>
    QRCode.create('0', { errorCorrectionLevel: 'M', version, maskPattern }).modules.data;
  const zero = withMask(0);
  bits = new Uint8Array(size * size);
  for (let p = 1; p < 8; p++) {
    const masked = withMask(p as QRCodeMaskPattern);
    for (let i = 0; i < bits.length; i++) bits[i] |= (masked[i] ^ zero[i]) << p;
  }
  maskBitsBySize.set(size, bits);
  return bits;
}

/*
 * The penalties score all 8 masks at once: `lanes[i]` holds module i under every mask (bit p =
 * mask p), so one bitwise operation tests a feature in 8 symbols, and a feature's 8-bit set of
 * masks is counted in `points[set]` (a histogram summed per mask at the end).
 */

/** N1 and N3 of one row (first = row * size, step 1) or column (first = column, step size). */
function linePoints(lanes: Uint8Array, size: number, first: number, step: number, points: Int32Array): void {
  // masks whose current run of one colour is at least 2, 3, 4, 5 modules long
  let run2 = 0;
  let run3 = 0;
  let run4 = 0;
  let run5 = 0;
  // the previous 10 modules, a1 the last
  let [a1, a2, a3, a4, a5, a6, a7, a8, a9, a10] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  for (let k = 0, i = first; k < size; k++, i += step) {
    const a0 = lanes[i];
    const same = k === 0 ? 0 : ~(a0 ^ a1) & 0xff;
    const run6 = same & run5;
    run5 = same & run4;
    run4 = same & run3;
    run3 = same & run2;
    run2 = same;
    // N1: a run of n >= 5 costs 3 + (n - 5): 3 as it reaches 5, 1 for each module after
    points[run5 & ~run6] += 3;
    points[run6] += 1;
    // N3: the 11 modules ending here are 1011101 0000 or 0000 1011101 (qrcode's 0x5D0, 0x05D)
    if (k >= 10) {
      const core = a6 & ~a5 & a4;
      const found =
        ((a10 & ~a9 & a8 & a7 & core & ~(a3 | a2 | a1 | a0)) | (~(a10 | a9 | a8 | a7) & core & a3 & a2 & ~a1 & a0)) &
        0xff;
      if (found) points[found] += 40;
    }
    // (one assignment each: a destructuring swap here is several times slower)
    a10 = a9;
    a9 = a8;
    a8 = a7;
    a7 = a6;
    a6 = a5;
    a5 = a4;
    a4 = a3;
    a3 = a2;
    a2 = a1;
    a1 = a0;
  }
}

/**
 * qrcode 1.5.4's penalty (getPenaltyN1 + N2 + N3 + N4 of core/mask-pattern.js: the same numbers)
 * of each of the 8 symbols in `lanes`. N1: 3 + (n - 5) per run of n >= 5 modules of one colour in
 * a row or column; N2: 3 per 2x2 block of one colour (overlapping); N3: 40 per 1011101 with 4
 * light modules before or after it, inside a row or column (no quiet zone); N4: 10 per 5% (rounded
 * up) the share of dark modules is from 50%.
 */
export function maskPenalties(lanes: Uint8Array, size: number): number[] {
  const points = new Int32Array(256);
  const dark = new Int32Array(256);
  for (let k = 0; k < size; k++) {
    linePoints(lanes, size, k * size, 1, points);
    linePoints(lanes, size, k, size, points);
  }
  for (let i = 0; i < lanes.length; i++) dark[lanes[i]]++;
  for (let r = 0; r < size - 1; r++) {
    for (let i = r * size, end = i + size - 1; i < end; i++) {
      const a = lanes[i];
      points[~((a ^ lanes[i + 1]) | (a ^ lanes[i + size]) | (a ^ lanes[i + size + 1])) & 0xff] += 3;
    }
  }
  const penalties: number[] = [];
  for (let p = 0; p < 8; p++) {
    let sum = 0;
    let darkCount = 0;
    for (let set = 1 << p; set < 256; set = (set + 1) | (1 << p)) {
      sum += points[set];
      darkCount += dark[set];
    }
    // N4 as qrcode computes it, floating point and all
    penalties.push(sum + Math.abs(Math.ceil((darkCount * 100) / lanes.length / 5) - 10) * 10);
  }
  return penalties;
}

/**
 * The payload's QR symbol (error correction M) exactly as QRCode.create makes it, its mask the
 * first of the lowest penalty (getBestMask's choice), with the 8 masks' penalties.
 */
export function qrSymbol(payload: string): {
  size: number;
  modules: Uint8Array;
  maskPattern: number;
  penalties: number[];
} {
  const { size, data } = QRCode.create(payload, { errorCorrectionLevel: 'M', maskPattern: 0 }).modules;
  const bits = maskBits(size);
  const modules = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) modules[i] = -data[i] ^ bits[i]; // all 8 masks
  const penalties = maskPenalties(modules, size);
  const maskPattern = penalties.indexOf(Math.min(...penalties));
  for (let i = 0; i < modules.length; i++) modules[i] = (modules[i] >> maskPattern) & 1;
  return { size, modules, maskPattern, penalties };
}

/** The payload as a QR code, PNG data URL. */
export function qrImage(payload: string): string {
  const { size, modules } = qrSymbol(payload);
  const png = modulesPng(size, (r, c) => modules[r * size + c] === 1);
  return `data:image/png;base64,${png.toString('base64')}`;
}
