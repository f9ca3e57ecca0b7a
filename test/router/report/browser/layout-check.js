/* global document, window, getComputedStyle, NodeFilter -- this script runs inside the browser page */
// Runs inside the report page in headless Chromium (appended by report-in-browser.test.ts): measures the laid-out
// page from the DOM's layout boxes and writes what it found, as JSON, into <pre id="layout-result">.
(function () {
  var problems = [];
  var TOL = 1;
  function rectOf(el) {
    return el.getBoundingClientRect();
  }
  function describe(el) {
    var cls = el.getAttribute && el.getAttribute('class');
    var text = (el.textContent || '').trim().slice(0, 60);
    return el.tagName.toLowerCase() + (cls ? '.' + cls.split(' ').join('.') : '') + (text ? ' "' + text + '"' : '');
  }
  function clipper(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') return p;
    }
    return null;
  }
  // 1. The page does not scroll sideways.
  if (document.documentElement.scrollWidth > window.innerWidth + TOL) {
    problems.push(
      'page is ' + document.documentElement.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window',
    );
  }
  // 2. No element sticks out of its parent's box (horizontally), except inside a scroll container.
  var all = document.querySelectorAll('main *');
  for (var i = 0; i < all.length; i++) {
    var el = all[i];
    if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue;
    var parent = el.parentElement;
    if (!parent || clipper(el)) continue;
    var r = rectOf(el),
      pr = rectOf(parent);
    if (r.width === 0 && r.height === 0) continue;
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + TOL && getComputedStyle(el).overflowX === 'visible')
      problems.push(
        'content wider than its box: ' + describe(el) + ' (' + el.scrollWidth + ' > ' + el.clientWidth + ' px)',
      );
    if (r.left < pr.left - TOL || r.right > pr.right + TOL)
      problems.push(
        'overflows its parent: ' +
          describe(el) +
          ' [' +
          Math.round(r.left) +
          '..' +
          Math.round(r.right) +
          '] in [' +
          Math.round(pr.left) +
          '..' +
          Math.round(pr.right) +
          ']',
      );
  }
  // 3. Every SVG text lies inside its SVG (titles, ticks and legends are never cut).
  var svgs = document.querySelectorAll('svg');
  var texts = 0;
  for (var s = 0; s < svgs.length; s++) {
    var sr = rectOf(svgs[s]);
    var ts = svgs[s].querySelectorAll('text');
    var boxes = [];
    for (var t = 0; t < ts.length; t++) {
      var tr = rectOf(ts[t]);
      texts++;
      if (tr.left < sr.left - TOL || tr.right > sr.right + TOL || tr.top < sr.top - TOL || tr.bottom > sr.bottom + TOL)
        problems.push('text outside its chart: ' + describe(ts[t]));
      boxes.push({ el: ts[t], r: tr });
    }
    // 4. No two texts of a chart overlap (rotated axis labels included: their boxes are the rotated extent).
    for (var a = 0; a < boxes.length; a++) {
      for (var b = a + 1; b < boxes.length; b++) {
        var A = boxes[a].r,
          B = boxes[b].r;
        if (A.width === 0 || B.width === 0) continue;
        if (A.left < B.right - TOL && B.left < A.right - TOL && A.top < B.bottom - TOL && B.top < A.bottom - TOL)
          problems.push('texts overlap: ' + describe(boxes[a].el) + ' / ' + describe(boxes[b].el));
      }
    }
  }
  // 5. No two lines of HTML text overlap: every text node's line boxes, pairwise.
  var walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  var lines = [];
  for (var node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim() || node.parentElement.closest('svg')) continue;
    var range = document.createRange();
    range.selectNodeContents(node);
    var rects = range.getClientRects();
    for (var k = 0; k < rects.length; k++) if (rects[k].width > 0) lines.push({ node: node, r: rects[k] });
  }
  for (var x = 0; x < lines.length; x++) {
    for (var y = x + 1; y < lines.length; y++) {
      var P = lines[x].r,
        Q = lines[y].r;
      if (P.left < Q.right - TOL && Q.left < P.right - TOL && P.top < Q.bottom - TOL && Q.top < P.bottom - TOL)
        problems.push(
          'text lines overlap: "' +
            lines[x].node.textContent.trim().slice(0, 40) +
            '" / "' +
            lines[y].node.textContent.trim().slice(0, 40) +
            '"',
        );
    }
  }
  var out = document.createElement('pre');
  out.id = 'layout-result';
  out.textContent = JSON.stringify({
    problems: problems.slice(0, 50),
    problemCount: problems.length,
    svgs: svgs.length,
    svgTexts: texts,
    textLines: lines.length,
    width: window.innerWidth,
  });
  document.body.appendChild(out);
})();
