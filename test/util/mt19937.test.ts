// The ported random streams against CPython 3.11.7's `random` and numpy 2.4.6's legacy `RandomState`: every value
// below was computed under Python here (seeds 0, 1, 42, 233, 2^32 - 1, 2^32, 2^40 + 7, 2^100 + 12345, -5 and a
// 30-digit one for CPython; 0, 1, 42, 4608, 2^31, 2^32 - 1 for numpy) and is kept as a fact. The algorithms ported are
// CPython's (python/cpython: Modules/_randommodule.c for seeding and the generator, Lib/random.py for randbelow,
// shuffle, sample, choice, randint, uniform) and numpy's (numpy/numpy: numpy/random/_mt19937.pyx for seeding,
// numpy/random/mtrand.pyx and numpy/random/_bounded_integers.pyx.in for rand, randint, permutation, shuffle, choice);
// where the ported environments draw from them is in docs/spec.md §8.
import { describe, expect, it } from 'vitest';
import { MT19937, NumpyRandomState, PyRandom } from '../../src/util/mt19937.js';

interface PythonCase {
  seed: string;
  random: number[];
  getrandbits: number[];
  randbelow: number[];
  randint: number[];
  choice: string;
  shuffle: number[];
  sample_small: number[];
  sample_pool: number[];
  sample_set: number[];
  uniform: number;
  after: number;
}

interface NumpyCase {
  seed: number;
  rand: number[];
  randint_100: number[];
  randint_16: number[];
  randint_big: number[];
  randint_full: number[];
  randint_one: number[];
  randint_neg: number[];
  permutation: number[];
  shuffle: number[];
  choice: number[];
  after: number;
}

const PYTHON: PythonCase[] = [
  {
    seed: '0',
    random: [0.8444218515250481, 0.7579544029403025, 0.420571580830845],
    getrandbits: [0, 123, 1097954097, 2087043557],
    randbelow: [0, 1, 1, 5, 597, 938204377, 2167613558, 598176026],
    randint: [2, 1, 5, 3, 5, 2, 3874773259],
    choice: 'e',
    shuffle: [7, 6, 8, 2, 0, 4, 3, 5, 9, 1],
    sample_small: [20.0, 30.0],
    sample_pool: [15, 14, 16, 8, 1, 12, 17],
    sample_set: [1, 11, 92, 51, 90, 85],
    uniform: 1.1263291463681613,
    after: 0.6118970848141451,
  },
  {
    seed: '1',
    random: [0.13436424411240122, 0.8474337369372327, 0.763774618976614],
    getrandbits: [0, 15, 1063938749, 3268308804],
    randbelow: [0, 1, 2, 6, 807, 901749037, 403123852, 2095328386],
    randint: [4, 4, 5, 1, 4, -1, 4059906722],
    choice: 'f',
    shuffle: [1, 6, 2, 3, 7, 4, 5, 8, 9, 0],
    sample_small: [40.0, 30.0],
    sample_pool: [0, 16, 7, 14, 15, 8, 3],
    sample_set: [44, 29, 86, 28, 97, 58],
    uniform: 2.7612222764559684,
    after: 0.926506623785866,
  },
  {
    seed: '42',
    random: [0.6394267984578837, 0.025010755222666936, 0.27502931836911926],
    getrandbits: [0, 17, 1581559892, 440213415],
    randbelow: [0, 1, 0, 0, 95, 939042955, 999270936, 2340505846],
    randint: [2, 4, 5, 3, 1, 3, 3460967357],
    choice: 'g',
    shuffle: [9, 3, 6, 8, 0, 7, 1, 2, 4, 5],
    sample_small: [30.0, 20.0],
    sample_pool: [19, 8, 1, 14, 3, 16, 6],
    sample_set: [10, 70, 37, 80, 79, 46],
    uniform: 0.8867607262838102,
    after: 0.7045718362149235,
  },
  {
    seed: '233',
    random: [0.6824769139473528, 0.6283202109809801, 0.5251745077282681],
    getrandbits: [1, 108, 1039626079, 2365588101],
    randbelow: [0, 0, 0, 4, 239, 61767605, 330409483, 3043208473],
    randint: [3, 1, 4, 3, 2, -3, 1256039450],
    choice: 'c',
    shuffle: [8, 6, 1, 2, 3, 7, 0, 4, 5, 9],
    sample_small: [40.0, 30.0],
    sample_pool: [5, 1, 2, 3, 6, 17, 19],
    sample_set: [40, 95, 66, 57, 16, 3],
    uniform: 2.7998796711489593,
    after: 0.46559766767747024,
  },
  {
    seed: '4294967295',
    random: [0.6353574441341173, 0.20319993954407756, 0.6073666030347188],
    getrandbits: [0, 77, 730204163, 4130059007],
    randbelow: [0, 1, 1, 7, 420, 276052667, 931911147, 2621699665],
    randint: [4, 5, 3, 2, 1, -1, 160615420],
    choice: 'h',
    shuffle: [7, 5, 2, 3, 8, 0, 6, 1, 4, 9],
    sample_small: [10.0, 40.0],
    sample_pool: [12, 15, 13, 5, 9, 8, 7],
    sample_set: [83, 5, 50, 40, 10, 31],
    uniform: 1.6153089185451606,
    after: 0.49438618445504345,
  },
  {
    seed: '4294967296',
    random: [0.11299430095636409, 0.41782886486292836, 0.0166763664992291],
    getrandbits: [1, 112, 1730113792, 3274195809],
    randbelow: [0, 1, 0, 2, 77, 1860411164, 2152139213, 1349299654],
    randint: [4, 4, 4, 2, 1, 2, 3816158461],
    choice: 'c',
    shuffle: [3, 2, 0, 7, 6, 1, 9, 5, 4, 8],
    sample_small: [40.0, 30.0],
    sample_pool: [1, 11, 0, 8, 7, 2, 19],
    sample_set: [45, 58, 53, 56, 20, 18],
    uniform: -1.5573669207948369,
    after: 0.26125956461609734,
  },
  {
    seed: '1099511627783',
    random: [0.6137037779936511, 0.8149162973309487, 0.9450115087592873],
    getrandbits: [1, 90, 1022039221, 1077368710],
    randbelow: [0, 1, 2, 5, 402, 1902582600, 1930265598, 1599202729],
    randint: [4, 5, 2, 2, 5, 2, 2456062640],
    choice: 'a',
    shuffle: [7, 3, 2, 0, 9, 6, 8, 5, 1, 4],
    sample_small: [10.0, 20.0],
    sample_pool: [9, 15, 0, 12, 11, 16, 4],
    sample_set: [60, 44, 93, 86, 81, 31],
    uniform: 0.8242612471294235,
    after: 0.4965930073842305,
  },
  {
    seed: '1267650600228229401496703217721',
    random: [0.44487310994347073, 0.30211940106972124, 0.6943236571773822],
    getrandbits: [0, 121, 334037600, 1969679323],
    randbelow: [0, 1, 2, 0, 602, 1845005282, 4215105108, 2782018022],
    randint: [3, 4, 1, 3, 3, -3, 3361105993],
    choice: 'b',
    shuffle: [7, 4, 5, 1, 0, 6, 3, 2, 8, 9],
    sample_small: [40.0, 20.0],
    sample_pool: [11, 5, 6, 2, 15, 8, 16],
    sample_set: [48, 8, 83, 68, 23, 91],
    uniform: -0.6917228634931365,
    after: 0.12595476091948243,
  },
  {
    seed: '-5',
    random: [0.6229016948897019, 0.7417869892607294, 0.7951935655656966],
    getrandbits: [1, 107, 1588920084, 2800454814],
    randbelow: [0, 1, 0, 0, 922, 673671309, 486215926, 1596840319],
    randint: [2, 4, 5, 1, 5, -2, 930847394],
    choice: 'e',
    shuffle: [4, 7, 5, 3, 1, 0, 8, 9, 6, 2],
    sample_small: [10.0, 40.0],
    sample_pool: [6, 19, 5, 17, 9, 16, 3],
    sample_set: [69, 86, 80, 26, 23, 88],
    uniform: -1.015604780369837,
    after: 0.9650963909457748,
  },
  {
    seed: '123456789012345678901234567890',
    random: [0.7275084571578186, 0.1595204831720859, 0.011812474780114934],
    getrandbits: [0, 122, 1894165686, 3203362323],
    randbelow: [0, 0, 1, 4, 693, 292270949, 3034082152, 881597038],
    randint: [1, 2, 5, 4, 5, -1, 1047924188],
    choice: 'c',
    shuffle: [4, 8, 1, 0, 6, 7, 3, 5, 9, 2],
    sample_small: [20.0, 30.0],
    sample_pool: [19, 5, 0, 18, 16, 17, 3],
    sample_set: [29, 34, 74, 80, 35, 26],
    uniform: -0.8963789523766945,
    after: 0.16598012913594395,
  },
];

const NUMPY: NumpyCase[] = [
  {
    seed: 0,
    rand: [0.5488135039273248, 0.7151893663724195, 0.6027633760716439, 0.5448831829968969],
    randint_100: [9, 83, 21, 36, 87],
    randint_16: [15430, 48600, 39512, 52620],
    randint_big: [1646934330, 2051621569],
    randint_full: [3400433126, 3488238119],
    randint_one: [5, 5, 5],
    randint_neg: [4, 7, -5, 3],
    permutation: [6, 1, 10, 2, 7, 5, 11, 0, 3, 4, 9, 8],
    shuffle: [4, 2, 7, 1, 0, 6, 8, 5, 3],
    choice: [439, 37, 407, 75, 338],
    after: 0.5438059500773263,
  },
  {
    seed: 1,
    rand: [0.417022004702574, 0.7203244934421581, 0.00011437481734488664, 0.30233257263183977],
    randint_100: [79, 64, 16, 1, 76],
    randint_16: [7751, 43757, 31228, 36230],
    randint_big: [4018175257, 2314265778],
    randint_full: [3634877716, 1800426750],
    randint_one: [5, 5, 5],
    randint_neg: [-5, 8, 1, 0],
    permutation: [11, 5, 3, 10, 6, 0, 8, 1, 9, 7, 4, 2],
    shuffle: [3, 2, 5, 6, 7, 8, 4, 0, 1],
    choice: [363, 426, 255, 306, 300],
    after: 0.4113544149304953,
  },
  {
    seed: 42,
    rand: [0.3745401188473625, 0.9507143064099162, 0.7319939418114051, 0.5986584841970366],
    randint_100: [82, 86, 74, 74, 87],
    randint_16: [60788, 44131, 60263, 16023],
    randint_big: [2795610242, 88475285],
    randint_full: [242285876, 4165731073],
    randint_one: [5, 5, 5],
    randint_neg: [1, -5, -9, -10],
    permutation: [7, 4, 10, 3, 1, 6, 2, 0, 8, 5, 9, 11],
    shuffle: [1, 5, 4, 8, 0, 7, 6, 3, 2],
    choice: [374, 396, 356, 87, 434],
    after: 0.28185477477339993,
  },
  {
    seed: 4608,
    rand: [0.927676627584934, 0.03706094371935098, 0.31131405011497715, 0.4770979420977197],
    randint_100: [97, 5, 79, 10, 92],
    randint_16: [57753, 18470, 32518, 2126],
    randint_big: [774348053, 2395836755],
    randint_full: [2925094036, 3129924493],
    randint_one: [5, 5, 5],
    randint_neg: [-9, 7, -10, 7],
    permutation: [6, 8, 10, 5, 4, 7, 1, 2, 3, 11, 9, 0],
    shuffle: [0, 4, 3, 6, 5, 1, 2, 7, 8],
    choice: [217, 250, 341, 122, 462],
    after: 0.8229323727154587,
  },
  {
    seed: 2147483648,
    rand: [0.15200287353446562, 0.8205427554297966, 0.7754982870984906, 0.5410721704334509],
    randint_100: [50, 62, 89, 76, 10],
    randint_16: [37767, 44854, 22656, 12405],
    randint_big: [1738210406, 3608243891],
    randint_full: [4117301629, 460864572],
    randint_one: [5, 5, 5],
    randint_neg: [-9, -3, 4, 4],
    permutation: [1, 9, 5, 2, 7, 11, 6, 8, 0, 10, 4, 3],
    shuffle: [0, 8, 3, 5, 4, 2, 7, 1, 6],
    choice: [394, 374, 121, 45, 372],
    after: 0.11618647634906842,
  },
  {
    seed: 4294967295,
    rand: [0.0976320289940138, 0.9123828453026218, 0.78903530185164, 0.7800035981134678],
    randint_100: [89, 32, 11, 74, 27],
    randint_16: [23693, 43446, 64599, 54583],
    randint_big: [3525808854, 1779240462],
    randint_full: [3338648997, 1392430281],
    randint_one: [5, 5, 5],
    randint_neg: [-1, 2, -6, 6],
    permutation: [5, 9, 0, 3, 10, 2, 11, 4, 1, 6, 8, 7],
    shuffle: [4, 2, 3, 0, 8, 6, 5, 1, 7],
    choice: [306, 203, 436, 315, 365],
    after: 0.41339338697806727,
  },
];

describe('MT19937', () => {
  it("matches the reference implementation's first outputs (init_genrand(5489), init_by_array([0x123, 0x234, 0x345, 0x456]))", () => {
    const a = new MT19937();
    a.initGenrand(5489);
    // mt19937ar.c's default seed gives 3499211612 first; init_by_array of its test key gives 1067595299.
    expect(a.uint32()).toBe(3499211612);
    const b = new MT19937();
    b.initByArray([0x123, 0x234, 0x345, 0x456]);
    expect([b.uint32(), b.uint32(), b.uint32()]).toEqual([1067595299, 955945823, 477289528]);
  });
});

describe("CPython's random", () => {
  for (const c of PYTHON) {
    it(`seed ${c.seed}`, () => {
      const r = new PyRandom(BigInt(c.seed));
      expect([r.random(), r.random(), r.random()]).toEqual(c.random);
      expect([1, 7, 31, 32].map((k) => r.getrandbits(k))).toEqual(c.getrandbits);
      expect([1, 2, 3, 10, 1000, 2 ** 31 + 1, 2 ** 32 - 1, 2 ** 32].map((n) => r.randbelow(n))).toEqual(c.randbelow);
      expect([...Array.from({ length: 5 }, () => r.randint(1, 5)), r.randint(-3, 3), r.randint(0, 2 ** 32 - 1)]).toEqual(c.randint);
      expect(r.choice([...'abcdefgh'])).toBe(c.choice);
      expect(r.shuffle(Array.from({ length: 10 }, (_, i) => i))).toEqual(c.shuffle);
      expect(r.sample([10, 20, 30, 40], 2)).toEqual(c.sample_small);
      expect(
        r.sample(
          Array.from({ length: 20 }, (_, i) => i),
          7,
        ),
      ).toEqual(c.sample_pool);
      expect(
        r.sample(
          Array.from({ length: 100 }, (_, i) => i),
          6,
        ),
      ).toEqual(c.sample_set);
      expect(r.uniform(-2, 3)).toBe(c.uniform);
      expect(r.random()).toBe(c.after);
    });
  }

  // Calls the ported environments make (docs/spec.md §8: Sokoban's room_utils.py, WebShop's goal shuffle with seed 233),
  // each recomputed with CPython 3.11.7: e.g. `random.Random(233).shuffle(list(range(10)))`.
  it('short vectors of the calls the environments make (seeds 42, 233, 0, 1, 2^40 + 7)', () => {
    expect(new PyRandom(42).random()).toBe(0.6394267984578837);
    expect(new PyRandom(233).shuffle(Array.from({ length: 10 }, (_, i) => i))).toEqual([5, 9, 0, 1, 4, 7, 6, 3, 8, 2]);
    const r0 = new PyRandom(0);
    expect(r0.sample([10, 20, 30, 40], 2)).toEqual([40, 20]);
    expect(r0.random()).toBe(0.04048437818077755);
    const r1 = new PyRandom(1);
    expect(r1.shuffle(Array.from({ length: 8 }, (_, i) => i))).toEqual([3, 6, 1, 5, 7, 0, 4, 2]);
    expect(r1.randint(1, 5)).toBe(4);
    expect(r1.choice([...'abcdefgh'])).toBe('g');
    expect(new PyRandom(2n ** 40n + 7n).random()).toBe(0.6137037779936511);
  });

  it('refuses what it does not port, with the reason', () => {
    const r = new PyRandom(0);
    expect(() => r.getrandbits(33)).toThrow(/\[0, 32\]/);
    expect(() => r.randbelow(0)).toThrow(RangeError);
    expect(() => r.sample([1, 2], 3)).toThrow(/larger than population/);
    expect(() => r.choice([])).toThrow(/empty/);
  });
});

describe("numpy's legacy RandomState", () => {
  for (const c of NUMPY) {
    it(`seed ${c.seed}`, () => {
      const rs = new NumpyRandomState(c.seed);
      expect(rs.randArray(4)).toEqual(c.rand);
      expect(rs.randints(0, 100, 5)).toEqual(c.randint_100);
      expect(rs.randints(0, 2 ** 16 - 1, 4)).toEqual(c.randint_16);
      expect(rs.randints(2 ** 16, 2 ** 32 - 1, 2)).toEqual(c.randint_big);
      expect(rs.randints(0, 2 ** 32, 2)).toEqual(c.randint_full);
      expect(rs.randints(5, 6, 3)).toEqual(c.randint_one);
      expect(rs.randints(-10, 10, 4)).toEqual(c.randint_neg);
      expect(rs.permutation(12)).toEqual(c.permutation);
      expect(rs.shuffle(Array.from({ length: 9 }, (_, i) => i))).toEqual(c.shuffle);
      expect(rs.choiceWithoutReplacement(500, 5)).toEqual(c.choice);
      expect(rs.rand()).toBe(c.after);
    });
  }

  // LaMer's MineSweeper layout (`RandomState(seed).rand(rows, cols)`, docs/spec.md §8) and the bounded draws, each
  // recomputed with numpy 2.4.6: e.g. `np.random.RandomState(4608).randint(0, 2**16 - 1, 4)`.
  it('short vectors of the calls the environments make (seeds 0, 42, 4608), and the seed range', () => {
    expect(new NumpyRandomState(0).rand()).toBe(0.5488135039273248);
    expect(new NumpyRandomState(42).randints(0, 100, 5)).toEqual([51, 92, 14, 71, 60]);
    const rs = new NumpyRandomState(4608);
    expect(rs.randints(0, 2 ** 16 - 1, 4)).toEqual([14124, 18840, 54141, 14873]);
    expect(rs.randints(2 ** 16, 2 ** 32 - 1, 2)).toEqual([1337149194, 2151459215]);
    expect(new NumpyRandomState(0).choiceWithoutReplacement(500, 5)).toEqual([90, 254, 283, 445, 461]);
    expect(() => new NumpyRandomState(2 ** 32)).toThrow(/between 0 and 2\*\*32 - 1/);
    expect(() => new NumpyRandomState(0).randint(3, 3)).toThrow(/low >= high/);
  });
});
