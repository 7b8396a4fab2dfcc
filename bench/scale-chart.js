// The picture of `npm run bench -- scale`: p99 against size, one line per read, as a Vega-Lite spec compiled
// to Vega and rendered to SVG in Node (View.toSVG: no browser, no canvas).
import { writeFileSync } from 'node:fs';
import { parse, View } from 'vega';
import { compile } from 'vega-lite';

// Tableau 20, then Dark 2 and Set 1: about 30 reads, and no two lines may share a colour.
const COLOURS = [
  ...['#4c78a8', '#9ecae9', '#f58518', '#ffbf79', '#54a24b', '#88d27a', '#b79a20', '#f2cf5b', '#439894', '#83bcb6'],
  ...['#e45756', '#ff9d98', '#79706e', '#bab0ac', '#d67195', '#fcbfd2', '#b279a2', '#d6a5c9', '#9e765f', '#d8b5a5'],
  ...['#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e', '#e6ab02', '#a6761d', '#666666'],
  ...['#e41a1c', '#377eb8', '#4daf4a', '#984ea3', '#ff7f00', '#a65628'],
];

/**
 * Writes the chart of `series` (`{ measure, size, p99Ms }[]`; `group` optional) to `file` as SVG. Size and p99 are
 * on log scales, so a flat curve is a flat line and a linear growth climbs one decade per decade of size.
 */
export async function renderScaleChart(series, file, { title, subtitle } = {}) {
  const values = series
    .filter((s) => Number.isFinite(s.size) && s.size > 0 && Number.isFinite(s.p99Ms))
    // A log scale has no zero: a p99 under the timer's resolution is drawn at 0.1 ms.
    .map((s) => ({ ...s, p99Ms: Math.max(0.1, s.p99Ms) }));
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title ?? 'p99 latency versus data size', subtitle: subtitle ?? '' },
    width: 640,
    height: 520,
    background: 'white',
    data: { values },
    mark: { type: 'line', point: true, strokeWidth: 1.5 },
    encoding: {
      x: {
        field: 'size',
        type: 'quantitative',
        scale: { type: 'log' },
        title:
          'size: tags, links (schemas, hot tag), layers, versions (history), events, or runtimes and watchers (fleet)',
        axis: { format: '~s' },
      },
      y: { field: 'p99Ms', type: 'quantitative', scale: { type: 'log' }, title: 'p99 (ms)' },
      color: {
        field: 'measure',
        type: 'nominal',
        scale: { range: COLOURS },
        legend: { title: null, labelLimit: 320, columns: 1, symbolLimit: 60 },
      },
      // The dash tells what a line's size counts; its legend would repeat the axis title.
      strokeDash: { field: 'group', type: 'nominal', legend: null },
      tooltip: [
        { field: 'measure', type: 'nominal' },
        { field: 'size', type: 'quantitative' },
        { field: 'p99Ms', type: 'quantitative' },
      ],
    },
  };
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  writeFileSync(file, svg);
  return file;
}
