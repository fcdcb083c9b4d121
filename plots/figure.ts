/**
 * A figure as every notebook front end can show it: one SVG, rendered to PNG
 * with resvg, in a Jupyter MIME bundle that carries both.
 *
 * Why three forms of one picture: nbconvert's HTML export ranks
 * `image/svg+xml` above `image/png` and then strips an SVG's shape elements
 * (its `clean_html` filter keeps only their text), so an SVG-only output
 * arrives blank in an HTML page. `text/html` outranks both there and in
 * JupyterLab, so the bundle's `text/html` is an `<img>` of the PNG (a
 * `data:` URL, which sanitizers keep); LaTeX/PDF exports take `image/png`;
 * the SVG stays for front ends and readers that want the vector form.
 *
 * @example
 * ```ts
 * import { figureBundle } from "./figure.ts";
 * const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="10" height="10"/></svg>';
 * const bundle = await figureBundle(svg, { alt: "a square" });
 * if (!bundle["text/html"].startsWith('<img src="data:image/png;base64,')) throw new Error();
 * ```
 * @module
 */
import { Buffer } from "node:buffer";

/** Options of {@link svgToPNG}. */
export interface PNGOptions {
  /** Pixels per SVG unit. Default 1; notebook figures use 2 (sharp on high-density screens). */
  scale?: number;
  /**
   * Font for text whose family is not installed (resvg maps `sans-serif` to
   * Arial, absent on most Linux systems, and then falls back to this one).
   * Default `"DejaVu Sans"`.
   */
  fontFamily?: string;
}

/**
 * Renders an SVG to PNG bytes with resvg, text included (system fonts).
 *
 * @example
 * ```ts
 * import { svgToPNG } from "./figure.ts";
 * const png = await svgToPNG('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>', { scale: 2 });
 * if (png[1] !== 80) throw new Error("not a PNG"); // "\x89PNG"
 * ```
 */
export async function svgToPNG(svg: string, options: PNGOptions = {}): Promise<Uint8Array> {
  // Imported on first use: a native addon that commands without figures never load.
  const { Resvg } = await import("npm:@resvg/resvg-js@2.6.2");
  const scale = options.scale ?? 1;
  return new Resvg(svg, {
    font: { loadSystemFonts: true, defaultFontFamily: options.fontFamily ?? "DejaVu Sans" },
    fitTo: scale === 1 ? { mode: "original" } : { mode: "zoom", value: scale },
  }).render().asPng();
}

/**
 * Writes a plot to `path`: PNG when it ends in `.png` (rendered with
 * {@link svgToPNG} and `options`), else the SVG itself.
 *
 * @example
 * ```ts
 * import { writePlot } from "./figure.ts";
 * const path = await Deno.makeTempFile({ suffix: ".svg" });
 * await writePlot(path, '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>');
 * if (!(await Deno.readTextFile(path)).startsWith("<svg")) throw new Error();
 * await Deno.remove(path);
 * ```
 */
export async function writePlot(
  path: string,
  svg: string,
  options: PNGOptions = {},
): Promise<void> {
  if (path.endsWith(".png")) await Deno.writeFile(path, await svgToPNG(svg, options));
  else await Deno.writeTextFile(path, svg);
}

/** The width and height of an SVG document's root element (0 when it gives none). */
export function svgSize(svg: string): { width: number; height: number } {
  const root = svg.match(/<svg\b[^>]*>/)?.[0] ?? "";
  const attr = (name: string) => Number(root.match(new RegExp(`\\s${name}="([\\d.]+)`))?.[1] ?? 0);
  return { width: attr("width"), height: attr("height") };
}

/** Options of {@link figureBundle}. */
export interface FigureOptions {
  /** Text of the figure for screen readers and `text/plain`. Default `"[figure]"`. */
  alt?: string;
  /** Pixels per SVG unit of the PNG. Default 2. */
  scale?: number;
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
}

/**
 * The Jupyter MIME bundle of a figure: `image/svg+xml` (the SVG),
 * `image/png` (base64, rendered at `scale`), `text/html` (an `<img>` of that
 * PNG shown at the SVG's size) and `text/plain` (`alt`).
 */
export async function figureBundle(
  svg: string,
  options: FigureOptions = {},
): Promise<Record<string, string>> {
  const png = Buffer.from(await svgToPNG(svg, { scale: options.scale ?? 2 })).toString("base64");
  const { width, height } = svgSize(svg);
  const alt = options.alt ?? "[figure]";
  const size = width > 0 && height > 0 ? ` width="${width}" height="${height}"` : "";
  return {
    "image/svg+xml": svg,
    "image/png": png,
    "text/html": `<img src="data:image/png;base64,${png}"${size} alt="${escapeAttr(alt)}">`,
    "text/plain": alt,
  };
}
