/**
 * `talat promptpay --id <phone|tax id|e-wallet id> | --biller <id> --ref1 <r> [--ref2 <r>]
 *   [--amount <THB>] [--name <merchant>] [--city <city>] [--ref <label>] [--png FILE]`:
 * a PromptPay payload (tag 29 to a PromptPay id, or a tag-30 bill payment), printed alone on the
 * last line; --png also writes the QR code image.
 * `talat promptpay --parse <payload>`: the fields and the CRC check (exit 1 when the CRC is wrong
 * or the payload does not parse).
 */
import type { Command } from 'commander';
import QRCode from 'qrcode';
import { thbToSatang } from '../../domain/money';
import {
  billPaymentPayload,
  parsePayload,
  promptPayIdProblem,
  promptPayPayload,
  type PromptPayPayload,
} from '../../domain/promptpay';
import { CliError, output, usage } from '../context';

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
  const problem = promptPayIdProblem(f.id);
  if (problem) throw new Error(`--id: ${problem}`);
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

type Flags = Partial<
  Record<'id' | 'biller' | 'ref1' | 'ref2' | 'amount' | 'name' | 'city' | 'ref' | 'png' | 'parse', string>
> & {
  json?: boolean;
};

export function promptpayCommand(program: Command): void {
  program
    .command('promptpay')
    .description('build a PromptPay payload (and its QR image), or --parse one and check its CRC')
    .option('--id <id>', 'PromptPay id: phone number, national or tax id, e-wallet id')
    .option('--biller <id>', 'a bill payment (tag 30) to this biller id: tax id and 2-digit suffix')
    .option('--ref1 <ref>', 'bill payment Ref1 (with --biller)')
    .option('--ref2 <ref>', 'bill payment Ref2 (with --biller)')
    .option('--amount <THB>', 'the amount in baht, at most 2 decimals (none: the payer types it)')
    .option('--name <merchant>', 'merchant name (tag 59)')
    .option('--city <city>', 'merchant city (tag 60)')
    .option('--ref <label>', 'reference label (tag 62, sub-tag 05)')
    .option('--png <file>', 'also write the QR code as a PNG image')
    .option('--parse <payload>', 'list the fields of a payload and check its CRC (exit 1 when wrong)')
    .option('--json', 'print the payload, or the parsed fields, as JSON')
    .action(async (o: Flags) => {
      if (o.parse !== undefined) {
        let parsed: ReturnType<typeof parsePayload>;
        try {
          parsed = parsePayload(o.parse.trim());
        } catch (e) {
          throw new CliError(`not a PromptPay payload: ${(e as Error).message}`);
        }
        output(o.json, parsed, () => describePayload(o.parse!.trim()).lines.join('\n'));
        if (!parsed.crcValid) throw new CliError('the CRC is wrong: the payload was altered or mistyped');
        return;
      }
      let built: PromptPayPayload;
      try {
        built = payloadOf(o as Record<string, string>);
      } catch (e) {
        throw usage((e as Error).message);
      }
      if (o.png) {
        await QRCode.toFile(o.png, built.payload, { errorCorrectionLevel: 'M', margin: 4, scale: 8 });
        process.stderr.write(`QR code written to ${o.png}\n`);
      }
      output(o.json, { payload: built.payload, ...(o.png ? { png: o.png } : {}) }, () => built.payload);
    });
}
