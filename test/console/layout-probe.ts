/**
 * What the console's layout must never do at any width, measured in the page: scroll sideways, put a button
 * (partly) outside the viewport or outside a box that clips it, or break an int64 id across lines.
 */
import type { Page } from 'playwright-core';

export const MIN_ID = '-9223372036854775808';

export interface LayoutReport {
  readonly scrollWidth: number;
  readonly innerWidth: number;
  /** The buttons measured (shown, not visually hidden). */
  readonly buttons: number;
  /** Where MIN_ID is shown, and on how many lines each time. */
  readonly ids: readonly { readonly where: string; readonly lines: number }[];
  readonly problems: readonly string[];
}

/** Runs in the page (a string, so the test's types need no DOM library). */
const PROBE = `(() => {
  const id = ${JSON.stringify(MIN_ID)};
  const problems = [];
  const innerWidth = window.innerWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  if (scrollWidth > innerWidth) {
    // Name the innermost elements that stick out, so a failure says where to look.
    const out = [...document.body.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5);
    const innermost = out.filter((el) => !out.some((other) => other !== el && el.contains(other))).slice(0, 3);
    const names = innermost.map((el) => el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ' "' +
      (el.textContent || '').trim().slice(0, 40) + '"');
    problems.push('the page is ' + scrollWidth + ' px wide in a ' + innerWidth + ' px viewport: ' + names.join(', '));
  }
  const describe = (el) => (el.getAttribute('aria-label') || el.textContent || '').trim().replace(/\\s+/g, ' ') +
    ' (in ' + (el.closest('[class]')?.className || el.parentElement?.tagName) + ')';
  let buttons = 0;
  for (const button of document.querySelectorAll('button')) {
    const rect = button.getBoundingClientRect();
    if (button.getClientRects().length === 0 || rect.width <= 1 || rect.height <= 1) continue;
    buttons++;
    if (rect.left < -0.5 || rect.right > innerWidth + 0.5)
      problems.push('button ' + describe(button) + ' spans ' + Math.round(rect.left) + '..' + Math.round(rect.right) +
        ' px of a ' + innerWidth + ' px viewport');
    for (let box = button.parentElement; box !== null && box !== document.documentElement; box = box.parentElement) {
      if (getComputedStyle(box).overflowX === 'visible') continue;
      const clip = box.getBoundingClientRect();
      if (rect.left < clip.left - 0.5 || rect.right > clip.right + 0.5)
        problems.push('button ' + describe(button) + ' is clipped by its ' + box.tagName.toLowerCase() + '.' +
          box.className + ' (' + Math.round(rect.right) + ' > ' + Math.round(clip.right) + ' px)');
    }
  }
  const ids = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const at = node.data.indexOf(id);
    if (at < 0 || node.parentElement.getClientRects().length === 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + id.length);
    const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
    const box = node.parentElement.closest('td, li, h3, dd, p') || node.parentElement;
    const where = box.tagName.toLowerCase() + ' in ' + (box.closest('[class]:not(.id)')?.className || 'the page');
    ids.push({ where, lines });
    if (lines !== 1) problems.push('the id ' + id + ' in ' + where + ' spans ' + lines + ' lines');
  }
  return { scrollWidth, innerWidth, buttons, ids, problems };
})()`;

export async function measureLayout(page: Page): Promise<LayoutReport> {
  return (await page.evaluate(PROBE)) as LayoutReport;
}
