/**
 * `npm run -s promptpay -- --id <phone|tax id|e-wallet id> | --biller <id> --ref1 <r> [--ref2 <r>]
 *   [--amount <THB>] [--name <merchant>] [--city <city>] [--ref <label>] [--png FILE]`:
 * a PromptPay payload (tag 29 to a PromptPay id, or a tag-30 bill payment), printed alone on the
 * last line; --png also writes the QR code image.
 * `npm run -s promptpay -- --parse <payload>`: checks the CRC and prints the fields (exit 1 when
 * the CRC is wrong or the payload does not parse).
 */
import QRCode from 'qrcode';
import { thbToSatang } from '../domain/money';
import { billPaymentPayload, parsePayload, promptPayPayload, type PromptPayPayload } from '../domain/promptpay';
import { runsAsCommand } from './entry';

const USAGE = `usage:
  npm run -s promptpay -- --id <phone|tax id|e-wallet id> [--amount <THB>] [--name <merchant>] [--city <city>] [--ref <label>] [--png FILE]
  npm run -s promptpay -- --biller <tax id + suffix> --ref1 <ref> [--ref2 <ref>] [--amount <THB>] [--name <merchant>] [--city <city>] [--png FILE]
  npm run -s promptpay -- --parse <payload>`;

const FLAGS = new Set(['id', 'biller', 'ref1', 'ref2', 'amount', 'name', 'city', 'ref', 'png', 'parse']);

/** `--flag value` and `--flag=value` pairs; an unknown flag or a missing value is an error. */
export function parseFlags(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z0-9]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m || !FLAGS.has(m[1])) throw new Error(`unknown argument ${argv[i]}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    out[m[1]] = value;
  }
  return out;
}

/** The payload the flags describe. */
export function payloadOf(f: Record<string, string>): PromptPayPayload {
  let amountSatang: number | undefined;
  if (f.amount !== undefined) {
    const a = thbToSatang(f.amount);
    if (!a.ok) throw new Error(`--amount: ${a.reason}`);
    amountSatang = a.satang;
  }
  const tags = { merchantName: f.name, merchantCity: f.city, amountSatang };
  if (f.biller !== undefined) {
    if (f.id !== undefined) throw new Error('give --id or --biller, not both');
    if (f.ref1 === undefined) throw new Error('--biller needs --ref1');
    return billPaymentPayload({ billerId: f.biller, ref1: f.ref1, ref2: f.ref2, referenceLabel: f.ref, ...tags });
  }
  if (f.id === undefined) throw new Error('give --id or --biller');
  if (f.ref1 !== undefined || f.ref2 !== undefined) throw new Error('--ref1 and --ref2 belong to --biller');
  return promptPayPayload({ id: f.id, referenceLabel: f.ref, ...tags });
}

const NAMES: Record<string, string> = {
  '00': 'payload format',
  '01': 'point of initiation (11 static, 12 with amount)',
  '29': 'PromptPay credit transfer',
  '30': 'PromptPay bill payment',
  '53': 'currency (764 THB)',
  '54': 'amount',
  '58': 'country',
  '59': 'merchant name',
  '60': 'merchant city',
  '62': 'additional data',
  '63': 'CRC16',
};
const SUB_NAMES: Record<string, Record<string, string>> = {
  '29': { '00': 'AID', '01': 'phone', '02': 'national/tax id', '03': 'e-wallet id' },
  '30': { '00': 'AID', '01': 'biller id', '02': 'Ref1', '03': 'Ref2' },
  '62': { '01': 'bill number', '05': 'reference label', '07': 'terminal label' },
};

/** The fields of a payload, one per line, and the CRC verdict last. */
export function describePayload(payload: string): { lines: string[]; crcValid: boolean } {
  const parsed = parsePayload(payload);
  const lines: string[] = [];
  for (const f of parsed.fields) {
    lines.push(`${f.tag}  ${f.sub ? '' : f.value.padEnd(20)}  ${NAMES[f.tag] ?? ''}`.trimEnd());
    for (const s of f.sub ?? [])
      lines.push(`  ${s.tag}  ${s.value.padEnd(20)}  ${SUB_NAMES[f.tag]?.[s.tag] ?? ''}`.trimEnd());
  }
  lines.push(`CRC ${parsed.crcValid ? 'valid' : 'INVALID'}`);
  return { lines, crcValid: parsed.crcValid };
}

async function main(argv: string[]): Promise<number> {
  let flags: Record<string, string>;
  try {
    flags = parseFlags(argv);
    if (flags.parse !== undefined) {
      const { lines, crcValid } = describePayload(flags.parse.trim());
      console.log(lines.join('\n'));
      return crcValid ? 0 : 1;
    }
    const { payload } = payloadOf(flags);
    if (flags.png) {
      await QRCode.toFile(flags.png, payload, { errorCorrectionLevel: 'M', margin: 4, scale: 8 });
      console.error(`QR code written to ${flags.png}`);
    }
    console.log(payload);
    return 0;
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
}

if (runsAsCommand(module)) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
