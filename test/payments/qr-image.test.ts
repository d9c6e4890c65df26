/**
 * The QR image of POST /qrpayment (src/payments/qr-image.ts): a 1-bit PNG with exactly the pixels
 * qrcode's own PNG renderer draws with the options the gateway used before (M, margin 4, scale 4),
 * both decoded by sharp.
 */
import QRCode from 'qrcode';
import sharp from 'sharp';
import { qrImage } from '../../src/qr-image';

const pixels = async (dataUrl: string) => {
  expect(dataUrl.startsWith('data:image/png;base64,')).toBe(true);
  const png = Buffer.from(dataUrl.slice('data:image/png;base64,'.length), 'base64');
  const { data, info } = await sharp(png).greyscale().raw().toBuffer({ resolveWithObject: true });
  const bits: number[] = [];
  for (let i = 0; i < data.length; i += info.channels) bits.push(data[i] < 128 ? 1 : 0);
  return { width: info.width, height: info.height, bits: bits.join('') };
};

it.each(['ORD-1', 'x'.repeat(60), '0'.repeat(200), 'ไทย ☃ 00020101021229370016A000000677010111'])(
  'draws the same pixels as qrcode (%#), in fewer bytes',
  async (payload) => {
    const reference = await QRCode.toDataURL(payload, { errorCorrectionLevel: 'M', margin: 4, scale: 4 });
    const ours = qrImage(payload);
    expect(await pixels(ours)).toEqual(await pixels(reference));
    expect(ours.length).toBeLessThan(reference.length);
  },
);
