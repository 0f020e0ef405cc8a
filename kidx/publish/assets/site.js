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
    // the page as written is the matrix with nothing chosen: apply() then changes nothing but
    // the count, and would touch every cell of a large index as it loads
    function chosen() { return search.value || selects.some(function (s) { return s.value; }); }
    if (chosen()) apply();
    else shown.textContent = rows.length + " of " + rows.length + " rows";
    window.addEventListener("pageshow", function () { if (chosen()) apply(); });  // a form the browser restored
  }
  // the charts' hover box, on the points under root (a page, or a section just drawn)
  function tips(root) {
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
      var host = point.getAttribute("data-host");
      if (host) { var h = document.createElement("div"); h.textContent = host; tip.appendChild(h); }
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
    Array.prototype.forEach.call(root.querySelectorAll("svg.chart a.pt"), function (point) {
      point.addEventListener("mouseenter", function (e) { show(point, e.clientX, e.clientY); });
      point.addEventListener("mousemove", function (e) { show(point, e.clientX, e.clientY); });
      point.addEventListener("mouseleave", function () { tip.hidden = true; });
      point.addEventListener("focus", function () {
        var box = point.getBoundingClientRect(); show(point, box.right, box.bottom);
      });
      point.addEventListener("blur", function () { tip.hidden = true; });
    });
  }
  // A run page: each run's section drawn from the page's own data (zlib-compressed JSON in
  // base64, inflated by the browser's DecompressionStream; no fetch, so file:// works too).
  function runPages() {
    var holder = document.getElementById("run-data");
    if (!holder) return;
    function element(tag, text, className) {
      var node = document.createElement(tag);
      if (text !== undefined && text !== null) node.textContent = text;
      if (className) node.className = className;
      return node;
    }
    function link(href, text) {
      var a = element("a", text);
      a.setAttribute("href", "../" + href);
      return a;
    }
    function joined(parent, parts) {
      parts.forEach(function (part, i) {
        if (i) parent.appendChild(document.createTextNode(" · "));
        parent.appendChild(typeof part === "string" ? document.createTextNode(part) : part);
      });
      return parent;
    }
    // JSON text indented two spaces a level, its characters otherwise as they are (a number
    // is never parsed, so none is rounded)
    function indented(text) {
      var out = [], depth = 0, inString = false, escaped = false;
      function newline() { out.push("\n" + "  ".repeat(depth)); }
      for (var i = 0; i < text.length; i++) {
        var c = text[i];
        if (inString) {
          out.push(c);
          if (escaped) escaped = false;
          else if (c === "\\") escaped = true;
          else if (c === '"') inString = false;
        } else if (c === '"') { inString = true; out.push(c); }
        else if (c === "{" || c === "[") {
          var close = c === "{" ? "}" : "]";
          if (text[i + 1] === close) { out.push(c + close); i++; continue; }
          out.push(c); depth++; newline();
        } else if (c === "}" || c === "]") { depth--; newline(); out.push(c); }
        else if (c === ",") { out.push(c); newline(); }
        else if (c === ":") out.push(": ");
        else out.push(c);
      }
      return out.join("");
    }
    function draw(run, objects) {
      var article = document.getElementById(run.anchor);
      if (!article) return;
      article.textContent = "";
      var crumbs = [];
      if (run.family) crumbs.push(link(run.family, "group family"));
      if (run.series) crumbs.push(link(run.series, "series"));
      article.appendChild(joined(element("p", null, "crumbs"), crumbs));
      article.appendChild(element("h1", run.title, "runname"));
      var lede = [element("code", run.name), element("code", run.digest), run.status];
      if (run.measure) lede.push(element("strong", run.measure));
      if (run.sol) lede.push(run.sol);
      if (run.host) lede.push(element("span", run.host, "host-bound"));
      lede.push("observed " + run.observed);
      article.appendChild(joined(element("p", null, "lede"), lede));
      article.appendChild(element("h2", "References"));
      var table = element("table", null, "facts");
      var body = table.appendChild(element("tbody"));
      run.references.forEach(function (reference) {
        var object = objects[reference[1]];
        var row = body.appendChild(element("tr"));
        var head = row.appendChild(element("th", reference[0]));
        head.setAttribute("scope", "row");
        var cell = row.appendChild(element("td"));
        if (object[0] === null) cell.appendChild(document.createTextNode("not in the store"));
        else {
          cell.appendChild(object[2] ? link(object[2], object[0]) : document.createTextNode(object[0]));
          if (object[1]) cell.appendChild(document.createTextNode(" · " + object[1]));
        }
        cell.appendChild(element("br"));
        cell.appendChild(element("code", reference[1]));
      });
      article.appendChild(table);
      if (run.referrers.length) {
        article.appendChild(element("h2", "Referred to by"));
        var list = article.appendChild(element("ul"));
        run.referrers.forEach(function (r) { list.appendChild(element("li")).appendChild(link(r[0], r[1])); });
      }
      article.appendChild(element("h2", "In the CLI"));
      article.appendChild(element("pre", "kidx describe run " + run.name + "\nkidx get run " + run.digest +
        " -o yaml", "cli"));
      var details = article.appendChild(element("details"));
      details.open = true;
      details.appendChild(element("summary", "Manifest"));
      details.appendChild(element("pre", indented(run.manifest), "manifest"));
    }
    // the page's document, then each run's manifest (JSON text) on a line of its own
    inflate(holder, "kidx describe run NAME shows each run.", function (text) {
      var lines = text.split("\n"), data = JSON.parse(lines[0]);
      data.runs.forEach(function (run, i) { run.manifest = lines[i + 1]; draw(run, data.objects); });
      holder.setAttribute("data-drawn", String(data.runs.length));
      var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (target) target.scrollIntoView();
    });
  }
  // A page's data: zlib-compressed text in base64 in the holder's data-deflate, inflated by the
  // browser's DecompressionStream (no fetch, so file:// works too)
  function inflate(holder, instead, done) {
    if (typeof DecompressionStream === "undefined") {
      holder.hidden = false;
      holder.textContent = "This browser cannot inflate this page's data (DecompressionStream): " + instead;
      return;
    }
    var binary = atob(holder.getAttribute("data-deflate"));
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    new Response(inflated).text().then(done);
  }
  // An element as data, [tag, {attribute: value}, child...], a child an element or text:
  // built with createElement(NS)/setAttribute/createTextNode, so nothing is parsed as HTML.
  // Tags are the site's own (any other is left out), an attribute named on... or style
  // never set, and an address only ever relative.
  var SVG = "http://www.w3.org/2000/svg";
  var TAGS = /^(a|br|code|div|em|figure|h1|h2|li|p|small|strong|table|tbody|td|th|thead|tr|ul|svg|g|line|rect|circle|polygon|polyline|text|title)$/;
  function build(node, inSvg) {
    if (typeof node === "string") return document.createTextNode(node);
    var tag = node[0];
    if (!TAGS.test(tag)) return document.createTextNode("");
    var svg = inSvg || tag === "svg";
    var element = svg ? document.createElementNS(SVG, tag) : document.createElement(tag);
    var attributes = node[1];
    Object.keys(attributes).forEach(function (name) {
      var value = String(attributes[name]);
      if (!/^[a-zA-Z][a-zA-Z0-9-]*$/.test(name) || /^on/i.test(name) || name.toLowerCase() === "style") return;
      if ((name === "href" || name === "src") && /^[\s\u0000-\u001f]*[a-z][a-z0-9+.\-]*:/i.test(value)) return;
      element.setAttribute(name, value);
    });
    for (var i = 2; i < node.length; i++) element.appendChild(build(node[i], svg));
    return element;
  }
  // A shard page (groups/AB.html, series/AB.html): the section its address names
  // (#ID) drawn from the page's data; without one, the page lists its sections.
  function sectionPages() {
    var holder = document.getElementById("page-data");
    if (!holder) return;
    var title = document.title.slice(document.title.lastIndexOf(" · "));
    inflate(holder, "kidx describe shows what it holds.", function (text) {
      var data = JSON.parse(text);
      var head = document.getElementById("shard-head");
      var sections = Array.prototype.slice.call(document.querySelectorAll("section.shard"));
      var listing = sections.map(function (section) { return section.cloneNode(true).childNodes; });
      function show() {
        var id = decodeURIComponent(location.hash.slice(1));
        var wanted = Object.prototype.hasOwnProperty.call(data, id) ? id : null;
        sections.forEach(function (section, i) {
          section.textContent = "";
          if (section.id === wanted) section.appendChild(build(data[id].body, false));
          else Array.prototype.forEach.call(listing[i], function (node) { section.appendChild(node.cloneNode(true)); });
          section.hidden = wanted !== null && section.id !== wanted;
        });
        head.hidden = wanted !== null;
        if (wanted !== null) {
          document.title = data[wanted].title + title;
          tips(document.getElementById(wanted));
          window.scrollTo(0, 0);
        }
        holder.setAttribute("data-drawn", wanted || "");
      }
      window.addEventListener("hashchange", show);
      show();
    });
  }
  filterIndex();
  tips(document);
  runPages();
  sectionPages();
})();
