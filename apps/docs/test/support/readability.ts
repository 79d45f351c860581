// What a reader of the built site can read, measured in the page (issue 37): every text's contrast
// against what is behind it (WCAG 2.x relative luminance), text cut off at the edge of a box that
// clips it (or of the page), and a control drawn over a code block's text. Each function runs in the
// browser through `page.evaluate`; it returns what fails, [] when all is well.
import type { Page } from "@tenant-integration/browser-testing";

/** A text whose contrast is below the bound: the text, its colours and the ratio. */
export interface LowContrast {
  text: string;
  color: string;
  background: string;
  ratio: number;
  where: string;
}

/**
 * Every rendered, visible text of the page whose contrast with its background is below `minimum`
 * (WCAG 2.x 1.4.3: 4.5:1). The background is the first opaque one behind the element, with the
 * translucent ones above it composited, the page's white below them all.
 */
export function lowContrastTexts(page: Page, minimum = 4.5): Promise<LowContrast[]> {
  return page.evaluate((bound) => {
    type RGBA = { r: number; g: number; b: number; a: number };
    const parse = (value: string): RGBA | null => {
      const match = /rgba?\(([^)]+)\)/.exec(value);
      if (!match) return null;
      const [r = 0, g = 0, b = 0, a = 1] = match[1]!
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      return { r, g, b, a };
    };
    const over = (top: RGBA, below: RGBA): RGBA => ({
      r: top.r * top.a + below.r * (1 - top.a),
      g: top.g * top.a + below.g * (1 - top.a),
      b: top.b * top.a + below.b * (1 - top.a),
      a: 1,
    });
    const channel = (v: number) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    const luminance = ({ r, g, b }: RGBA) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    const backgroundOf = (element: Element): RGBA => {
      const layers: RGBA[] = [];
      for (let at: Element | null = element; at; at = at.parentElement) {
        const colour = parse(getComputedStyle(at).backgroundColor);
        if (colour && colour.a > 0) {
          layers.push(colour);
          if (colour.a >= 1) break;
        }
      }
      return layers.reverse().reduce((below, top) => over(top, below), { r: 255, g: 255, b: 255, a: 1 });
    };
    const name = (element: Element) =>
      `${element.tagName.toLowerCase()}${element.className && typeof element.className === "string" ? `.${element.className.trim().split(/\s+/).slice(-2).join(".")}` : ""}`;
    const found = new Map<string, { text: string; color: string; background: string; ratio: number; where: string }>();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent?.trim() ?? "";
      const element = node.parentElement;
      if (text === "" || !element || element.closest("script, style, noscript, svg, [aria-hidden='true']")) continue;
      if (!element.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      const style = getComputedStyle(element);
      const colour = parse(style.color);
      if (!colour || colour.a === 0) continue;
      const background = backgroundOf(element);
      const foreground = over(colour, background);
      const [light, dark] = [luminance(foreground), luminance(background)].sort((x, y) => y - x);
      const ratio = (light! + 0.05) / (dark! + 0.05);
      if (ratio >= bound) continue;
      const rgb = (c: RGBA) => `rgb(${Math.round(c.r)}, ${Math.round(c.g)}, ${Math.round(c.b)})`;
      const key = `${name(element)} ${style.color} ${rgb(background)}`;
      if (!found.has(key))
        found.set(key, {
          text: text.slice(0, 60),
          color: style.color,
          background: rgb(background),
          ratio: Math.round(ratio * 100) / 100,
          where: name(element),
        });
    }
    return [...found.values()];
  }, minimum);
}

/**
 * Every visible text cut off sideways: a line of it reaching past the left or right edge of a box
 * that clips its content (overflow other than visible), or of the page. Vertical scrolling (the
 * sidebar, a long page) is no cut.
 */
export function cutTexts(page: Page): Promise<{ text: string; where: string; overflow: number }[]> {
  return page.evaluate(() => {
    const found = new Map<string, { text: string; where: string; overflow: number }>();
    const name = (element: Element) =>
      `${element.tagName.toLowerCase()}${element.className && typeof element.className === "string" ? `.${element.className.trim().split(/\s+/).slice(-2).join(".")}` : ""}`;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent?.trim() ?? "";
      const element = node.parentElement;
      if (text === "" || !element || element.closest("script, style, noscript, [aria-hidden='true']")) continue;
      if (!element.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      // The words' boxes: a space that hangs past the edge of a wrapping line (pre-wrap) is no cut text.
      const rects: DOMRect[] = [];
      for (const word of node.textContent!.matchAll(/\S+/g)) {
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        rects.push(...[...range.getClientRects()].filter((rect) => rect.width > 0 && rect.height > 0));
      }
      if (rects.length === 0) continue;
      // The boxes that clip this text sideways, and the page itself.
      let left = 0;
      let right = document.documentElement.clientWidth;
      let clipper: Element | null = null;
      for (let at: Element | null = element; at; at = at.parentElement) {
        const style = getComputedStyle(at);
        if (style.overflowX === "visible") continue;
        const box = at.getBoundingClientRect();
        const border = parseFloat(style.borderLeftWidth) || 0;
        const start = box.left + border;
        const end = start + at.clientWidth;
        if (end - start <= 0) continue;
        if (start > left) left = start;
        if (end < right) {
          right = end;
          clipper = at;
        }
      }
      const past = Math.max(...rects.map((rect) => Math.max(left - rect.left, rect.right - right)));
      if (past > 1) {
        const where = clipper ? name(clipper) : "the page";
        const key = `${where} ${text.slice(0, 30)}`;
        if (!found.has(key)) found.set(key, { text: text.slice(0, 60), where, overflow: Math.round(past) });
      }
    }
    return [...found.values()];
  });
}

/** Every visible copy button drawn over a line of the code it copies. */
export function coveredCodeLines(page: Page): Promise<{ button: string; line: string }[]> {
  return page.evaluate(() => {
    const covered: { button: string; line: string }[] = [];
    const buttons = [...document.querySelectorAll("[data-testid='copy-button']")].filter((button) =>
      button.checkVisibility({ opacityProperty: false, visibilityProperty: true }),
    );
    for (const button of buttons) {
      const b = button.getBoundingClientRect();
      if (b.width === 0) continue;
      // The code block the button belongs to: the nearest ancestor holding a <pre>.
      let block: Element | null = button.parentElement;
      while (block && !block.querySelector("pre")) block = block.parentElement;
      const pre = block?.querySelector("pre");
      if (!pre) continue;
      const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
      const range = document.createRange();
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (!node.textContent?.trim()) continue;
        range.selectNodeContents(node);
        for (const rect of range.getClientRects()) {
          const overlaps = rect.left < b.right && rect.right > b.left && rect.top < b.bottom && rect.bottom > b.top;
          if (overlaps) {
            covered.push({
              button: button.getAttribute("aria-label") ?? "copy",
              line: node.textContent.trim().slice(0, 60),
            });
            break;
          }
        }
      }
    }
    return covered;
  });
}

/**
 * Resolves once the page shows `theme`: the reader's system preference (the page was opened with
 * that `colorScheme`) or, where the page did not follow it, Redoc's own colour-mode button.
 */
export async function useTheme(page: Page, theme: "light" | "dark"): Promise<void> {
  const shows = () => page.evaluate((mode) => document.documentElement.classList.contains(mode), theme);
  for (let i = 0; i < 3 && !(await shows()); i++) {
    await page.locator("[data-testid='color-mode-switcher']").filter({ visible: true }).first().click();
  }
  await page.waitForFunction((mode) => document.documentElement.classList.contains(mode), theme);
}
