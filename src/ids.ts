/** Ids carry a typed prefix so a log line says what an id is (pay_, key_, req_, whk_, msg_, cfl_). */
import { randomUUID } from 'node:crypto';

export type IdPrefix =
  'pay' | 'key' | 'req' | 'whk' | 'evt' | 'msg' | 'dlq' | 'chg' | 'usr' | 'ord' | 'ep' | 're' | 'cfl';

export const newId = (prefix: IdPrefix): string => `${prefix}_${randomUUID().replace(/-/g, '')}`;
