// The native advantage kernel against numbers worked out by hand from SPEC §3 and §4: the cases the TS reference
// meets in test/algo/reference.test.ts (test/algo/hand-worked.ts).
import { handWorkedCases } from '../../algo/hand-worked.js';

handWorkedCases('native');
