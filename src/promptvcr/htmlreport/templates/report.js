// promptvcr report: a test's body is a <template> until the test is opened (fast to open a
// large report); the filters hide the tests that do not match. Plain JS, no library.
(function () {
  "use strict";
  function fill(test) {
    var template = test.querySelector(":scope > template.body");
    if (template) {
      test.appendChild(template.content.cloneNode(true));
      template.remove();
    }
  }
  var tests = Array.prototype.slice.call(document.querySelectorAll("details.test"));
  tests.forEach(function (test) {
    if (test.open) fill(test);
    test.addEventListener("toggle", function () { if (test.open) fill(test); });
  });
  var outcome = document.getElementById("f-outcome");
  var provider = document.getElementById("f-provider");
  var model = document.getElementById("f-model");
  var name = document.getElementById("f-name");
  var shown = document.getElementById("shown");
  function has(list, value) { return !value || list.indexOf(" " + value + " ") >= 0; }
  function apply() {
    var text = name.value.trim().toLowerCase();
    var count = 0;
    tests.forEach(function (test) {
      var d = test.dataset;
      var ok = has(d.outcomes, outcome.value) && has(d.providers, provider.value) &&
        has(d.models, model.value) && (!text || d.name.indexOf(text) >= 0);
      test.hidden = !ok;
      if (ok) count += 1;
    });
    shown.textContent = count + " of " + tests.length + " shown";
  }
  [outcome, provider, model].forEach(function (select) { select.addEventListener("change", apply); });
  name.addEventListener("input", apply);
  document.getElementById("unfold").addEventListener("click", function () {
    tests.forEach(function (test) { if (!test.hidden) { fill(test); test.open = true; } });
  });
  if (location.hash) {
    var target = document.querySelector(location.hash);
    if (target && target.matches("details.test")) { fill(target); target.open = true; }
  }
  apply();
})();
