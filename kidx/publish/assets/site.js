// kidx publish: the index's filters and search, and the charts' hover box.
// Text from the store is only ever set with textContent: nothing is parsed as HTML.
"use strict";
(function () {
  function filterIndex() {
    var table = document.getElementById("matrix");
    if (!table) return;
    var search = document.getElementById("search");
    var selects = Array.prototype.slice.call(document.querySelectorAll("#filters select"));
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var shown = document.getElementById("shown");
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var first = heads.length - table.querySelectorAll("thead th.env").length;
    function apply() {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var wanted = selects.filter(function (s) { return s.value; })
        .map(function (s) { return s.getAttribute("data-key") + "=" + s.value; });
      // a column (an environment) none of whose runs has a chosen label (another gpu's) goes too
      var hide = heads.map(function (head, i) {
        if (i < first) return false;
        var labels = " " + head.getAttribute("data-labels") + " ";
        return wanted.some(function (l) { return labels.indexOf(" " + l + " ") < 0; });
      });
      heads.forEach(function (head, i) { head.hidden = hide[i]; });
      var count = 0;
      rows.forEach(function (row) {
        var text = row.getAttribute("data-search");
        var labels = " " + row.getAttribute("data-labels") + " ";
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; }) &&
          wanted.every(function (l) { return labels.indexOf(" " + l + " ") >= 0; });
        row.hidden = !ok;
        Array.prototype.forEach.call(row.cells, function (cell, i) { cell.hidden = hide[i] || false; });
        if (ok) count++;
      });
      // a group whose first row is hidden: its first shown row carries the group's heading
      var head = null, headed = false;
      rows.forEach(function (row) {
        if (row.classList.contains("head")) { head = row; headed = false; }
        var heading = row.cells[0];
        if (row !== head) {
          heading.textContent = "";
          row.classList.remove("lead");
        }
        if (row.hidden || headed || !head) return;
        headed = true;
        if (row !== head) {
          Array.prototype.forEach.call(head.cells[0].childNodes, function (node) {
            heading.appendChild(node.cloneNode(true));
          });
          row.classList.add("lead");
        }
      });
      shown.textContent = count + " of " + rows.length + " rows";
    }
    search.addEventListener("input", apply);
    selects.forEach(function (s) { s.addEventListener("change", apply); });
    document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); });
    apply();
  }
  function tips() {
    var tip = document.getElementById("tip");
    if (!tip) return;
    function show(point, x, y) {
      tip.textContent = "";
      var head = document.createElement("b");
      head.textContent = point.getAttribute("data-impl") + " · " + point.getAttribute("data-x");
      tip.appendChild(head);
      var value = document.createElement("div");
      var spread = point.getAttribute("data-spread");
      value.textContent = point.getAttribute("data-value") + (spread ? "  (p20–p80 " + spread + ")" : "");
      value.className = "value";
      tip.appendChild(value);
      var change = point.getAttribute("data-change");
      if (change) { var c = document.createElement("div"); c.textContent = "change " + change; tip.appendChild(c); }
      var run = document.createElement("div");
      run.className = "muted";
      run.textContent = point.getAttribute("data-run") + " · " + point.getAttribute("data-digest");
      tip.appendChild(run);
      tip.hidden = false;
      var left = Math.min(x + 14, window.innerWidth - tip.offsetWidth - 8);
      var top = y + 14 + tip.offsetHeight > window.innerHeight ? y - tip.offsetHeight - 10 : y + 14;
      tip.style.left = Math.max(4, left) + "px";
      tip.style.top = Math.max(4, top) + "px";
    }
    Array.prototype.forEach.call(document.querySelectorAll("svg.chart a.pt"), function (point) {
      point.addEventListener("mouseenter", function (e) { show(point, e.clientX, e.clientY); });
      point.addEventListener("mousemove", function (e) { show(point, e.clientX, e.clientY); });
      point.addEventListener("mouseleave", function () { tip.hidden = true; });
      point.addEventListener("focus", function () {
        var box = point.getBoundingClientRect(); show(point, box.right, box.bottom);
      });
      point.addEventListener("blur", function () { tip.hidden = true; });
    });
  }
  filterIndex();
  tips();
})();
