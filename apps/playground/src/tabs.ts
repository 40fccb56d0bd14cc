// Two tabs, Inspect and Train: buttons with aria-selected, panels shown one at a time, the choice kept in the URL's
// hash (#train) so a reload or a link opens the same tab.

export function setupTabs(
  buttons: readonly HTMLButtonElement[],
  panels: ReadonlyMap<string, HTMLElement>,
): (name: string) => void {
  const show = (name: string) => {
    if (!panels.has(name)) return;
    for (const b of buttons) b.setAttribute("aria-selected", String(b.dataset.tab === name));
    for (const [n, p] of panels) p.hidden = n !== name;
  };
  for (const b of buttons) {
    b.addEventListener("click", () => {
      show(b.dataset.tab!);
      history.replaceState(
        null,
        "",
        b.dataset.tab === buttons[0]?.dataset.tab ? location.pathname + location.search : `#${b.dataset.tab}`,
      );
    });
  }
  show(panels.has(location.hash.slice(1)) ? location.hash.slice(1) : buttons[0]!.dataset.tab!);
  return show;
}
