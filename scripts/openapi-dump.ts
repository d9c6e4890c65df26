/** Prints /openapi.json of the current code (no server, no database): `npx tsx scripts/openapi-dump.ts > openapi.json`. */
import '../src/app/app';
import { openApiDocument } from '../src/http/openapi';

process.stdout.write(`${JSON.stringify(openApiDocument(), null, 2)}\n`);
