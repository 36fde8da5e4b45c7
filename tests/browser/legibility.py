"""What the browser tests check of a drawn chart's text (imported by test_book.py and
test_notebook_in_browser.py)."""

# Legibility of every drawn chart: each visible text (axis titles and labels, legend entries, point labels,
# titles) lies inside its chart's SVG (a clipped legend or axis shows as text past the edge), and no two
# visible texts overlap by more than a third of the smaller one (labels drawn over labels). Vega hides the
# axis labels it thins out with opacity 0; those are skipped.
LEGIBILITY_JS = """() => Array.from(document.querySelectorAll('svg.marks')).map((svg, i) => {
    const box = svg.getBoundingClientRect();
    const hidden = t => { for (let e = t; e && e !== svg; e = e.parentElement) {
        const o = e.getAttribute('opacity'), s = getComputedStyle(e);
        if (o === '0' || s.opacity === '0' || s.display === 'none' || s.visibility === 'hidden') return true; }
        return false; };
    const texts = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim() && !hidden(t))
        .map(t => ({s: t.textContent.trim(), r: t.getBoundingClientRect()})).filter(t => t.r.width > 0 && t.r.height > 0);
    const clipped = texts.filter(t => t.r.left < box.left - 2 || t.r.right > box.right + 2
        || t.r.top < box.top - 2 || t.r.bottom > box.bottom + 2).map(t => t.s);
    const overlapping = [];
    for (let a = 0; a < texts.length; a++) for (let b = a + 1; b < texts.length; b++) {
        const p = texts[a].r, q = texts[b].r;
        const w = Math.min(p.right, q.right) - Math.max(p.left, q.left), h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (w > 0 && h > 0 && w * h > Math.min(p.width * p.height, q.width * q.height) / 3)
            overlapping.push(texts[a].s + ' / ' + texts[b].s);
    }
    return {chart: i + 1, clipped: clipped.slice(0, 5), overlapping: overlapping.slice(0, 5)};
})"""
