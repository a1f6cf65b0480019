// The TS reference against numbers worked out by hand from SPEC §3 and §4 (the cases in hand-worked.ts; the native
// kernel meets the same cases in test/native/algo/reference.test.ts).
import { handWorkedCases } from './hand-worked.js';

handWorkedCases('reference');
