import {
  bandChart,
  cdfChart,
  instanceBars,
  textWidth,
  visibleTickLabels,
  wrapText,
  formatTickMs,
  logTicks,
} from '../../../router/src/report/svg-charts';

/** x and text of every tick label (class="tick") drawn below the x axis of an SVG. */
function xTickLabels(svg: string, axisY: number): { x: number; text: string }[] {
  return [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)" text-anchor="middle" class="tick">([^<]*)<\/text>/g)]
    .filter((m) => Number(m[2]) > axisY)
    .map((m) => ({ x: Number(m[1]), text: m[3] }));
}

function textOf(svg: string, cls: string): string[] {
  return [...svg.matchAll(new RegExp(`<text [^>]*class="${cls}">(.*?)</text>`, 'g'))].map((m) =>
    m[1]
      .replace(/<title>.*?<\/title>/g, '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

describe('when charts are laid out', () => {
  test.each([
    [0.5, 90_000, 540],
    [2, 8000, 540],
    [30, 400, 300],
    [1, 1e6, 760],
  ])(
    'GIVEN a log axis from %p to %p ms on a %p px chart THEN no two tick labels overlap and every power of ten is labelled',
    (lo, hi, width) => {
      const points = [lo, Math.sqrt(lo * hi), hi].map((value, i) => ({ value, fraction: (i + 1) / 3 }));
      const svg = cdfChart([{ label: 'a', color: '#000', points }], { scale: 'log', title: 't', xLabel: 'x', width });
      const labels = xTickLabels(svg, 300).sort((a, b) => a.x - b.x);
      expect(labels.length).toBeGreaterThan(1);
      for (let i = 1; i < labels.length; i++) {
        const gap =
          labels[i].x - labels[i - 1].x - (textWidth(labels[i].text, 11) + textWidth(labels[i - 1].text, 11)) / 2;
        expect({ between: [labels[i - 1].text, labels[i].text], clear: gap > 0 }).toEqual({
          between: [labels[i - 1].text, labels[i].text],
          clear: true,
        });
      }
      const decades = logTicks(
        Math.pow(10, Math.floor(Math.log10(lo))),
        Math.pow(10, Math.ceil(Math.log10(hi))),
      ).filter((t) => Number.isInteger(Math.log10(t)));
      for (const d of decades) expect(labels.map((l) => l.text)).toContain(formatTickMs(d));
    },
  );

  test('GIVEN ticks whose labels would collide THEN only the text is thinned, powers of ten first', () => {
    const ticks = [10, 20, 50, 100];
    const visible = visibleTickLabels(ticks, (t) => Math.log10(t) * 60, formatTickMs);
    expect(visible.has(10)).toBe(true);
    expect(visible.has(100)).toBe(true);
    expect(visible.size).toBeLessThan(ticks.length);
  });

  test('GIVEN a title longer than the chart THEN it wraps onto more lines, whole, and the chart grows to hold it', () => {
    const title =
      'sagemaker-prefix-aware (prefixLength=65536, concurrencyThreshold=1024, anotherVeryLongOption=123456789)';
    const short = instanceBars([{ id: 'a', requests: 1, share: 1, meanInFlight: 1, maxInFlight: 1 }], {
      title: 'x',
      color: '#000',
      width: 300,
    });
    const long = instanceBars([{ id: 'a', requests: 1, share: 1, meanInFlight: 1, maxInFlight: 1 }], {
      title,
      color: '#000',
      width: 300,
    });
    // Every character is there (a word longer than a line is split across lines).
    expect(textOf(long, 'chart-title').map((t) => t.replace(/ /g, ''))).toEqual([title.replace(/ /g, '')]);
    expect(long).not.toContain('…');
    const heightOf = (svg: string) => Number(/height="(\d+)"/.exec(svg)![1]);
    expect(heightOf(long)).toBeGreaterThan(heightOf(short));
    for (const line of wrapText(title, 40)) expect(line.length).toBeLessThanOrEqual(40);
    expect(wrapText(title, 40).join(' ')).toBe(title);
    expect(wrapText('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
    const cdf = cdfChart([{ label: title, color: '#000', points: [{ value: 1, fraction: 1 }] }], {
      scale: 'linear',
      title,
      xLabel: 'x',
      width: 300,
    });
    expect(textOf(cdf, 'chart-title').map((t) => t.replace(/ /g, ''))).toEqual([title.replace(/ /g, '')]);
    expect(textOf(cdf, 'legend-text').map((t) => t.replace(/ /g, ''))).toEqual([title.replace(/ /g, '')]);
  });

  test('GIVEN a shared scale THEN charts of different strategies get the same y ticks', () => {
    const even = [0.5, 0.5].map((share, i) => ({ id: `i${i}`, requests: 1, share, meanInFlight: 1, maxInFlight: 2 }));
    const skewed = [0.9, 0.1].map((share, i) => ({ id: `i${i}`, requests: 1, share, meanInFlight: 4, maxInFlight: 9 }));
    const scale = { share: 0.9, inFlight: 9 };
    const yTicks = (svg: string) => [...svg.matchAll(/text-anchor="end" class="tick">([^<]*)</g)].map((m) => m[1]);
    expect(yTicks(instanceBars(even, { title: 'a', color: '#000', scale }))).toEqual(
      yTicks(instanceBars(skewed, { title: 'b', color: '#000', scale })),
    );
    expect(yTicks(instanceBars(even, { title: 'a', color: '#000' }))).not.toEqual(
      yTicks(instanceBars(skewed, { title: 'b', color: '#000' })),
    );
  });
});

describe('when figures are drawn against a continuous x with their published bands', () => {
  const options = {
    title: 't',
    xLabel: 'x',
    yLabel: 'percent',
    formatX: (x: number) => `${x}×`,
    formatValue: (v: number) => `${v} %`,
  };

  test('GIVEN two series with bands THEN every measured point is drawn and each band is a shaded rectangle', () => {
    const svg = bandChart(
      [
        {
          label: 'P90',
          color: '#111111',
          points: [
            { x: 0.9, value: 20 },
            { x: 1.3, value: 35 },
            { x: 2, value: 80 },
          ],
          band: { min: 33, max: 37 },
        },
        {
          label: 'hit',
          color: '#222222',
          points: [
            { x: 0.9, value: 60 },
            { x: 2, value: null },
          ],
          band: { min: 82, max: 82 },
        },
      ],
      { ...options, yMin: 0, yMax: 100 },
    );
    expect(svg.match(/<circle /g)).toHaveLength(4);
    expect(svg.match(/<rect [^>]*fill-opacity="0.15"/g)).toHaveLength(2);
  });

  test('GIVEN a point-like published figure (≈82 %) THEN its band is still visible (at least 3 px high)', () => {
    const svg = bandChart(
      [
        {
          label: 'hit',
          color: '#222222',
          points: [
            { x: 1, value: 60 },
            { x: 2, value: 70 },
          ],
          band: { min: 82, max: 82 },
        },
      ],
      { ...options, yMin: 0, yMax: 100 },
    );
    const height = Number(/<rect [^>]*height="([\d.]+)" fill="#222222"/.exec(svg)?.[1]);
    expect(height).toBeGreaterThanOrEqual(3);
  });

  test('GIVEN standalone THEN the file carries its own styles; otherwise it relies on the page', () => {
    const series = [
      {
        label: 'a',
        color: '#000000',
        points: [
          { x: 1, value: 1 },
          { x: 2, value: 2 },
        ],
      },
    ];
    expect(bandChart(series, { ...options, standalone: true })).toContain('<style>');
    expect(bandChart(series, options)).not.toContain('<style>');
  });
});

describe('when a band chart has points below its lowest round tick', () => {
  test('GIVEN a value of −124.8 THEN the axis reaches below it, so the point is not drawn at a false height', () => {
    const svg = bandChart(
      [
        {
          label: 'P90',
          color: '#111111',
          points: [
            { x: 1, value: -124.8 },
            { x: 2, value: 80 },
          ],
        },
      ],
      {
        title: 't',
        xLabel: 'x',
        yLabel: 'percent',
        formatX: (x) => `${x}×`,
        formatValue: (v) => `${v} %`,
        yMax: 100,
      },
    );
    const ticks = [...svg.matchAll(/text-anchor="end" class="tick">(-?[\d.]+) %</g)].map((m) => Number(m[1]));
    expect(Math.min(...ticks)).toBeLessThanOrEqual(-124.8);
  });
});
