// Berth console: small enhancements only; every page shows its data without this.
// The copy button of a new API token.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    if (!navigator.clipboard) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      var input = document.getElementById(btn.dataset.copy);
      navigator.clipboard.writeText(input.value).then(function () {
        var out = btn.closest("div.notice").querySelector(".copied");
        if (out) out.textContent = out.dataset.copied;
      });
    });
  });
});

// The order form's licenses (order.html): a per-vCPU price follows the plan chosen,
// and a license the chosen image requires is ticked and fixed, as the order will
// hold it anyway; choosing another image gives the box back as it was. Delegated
// to the document, so it survives htmx's swap of the form.
function berthOrderLicenses() {
  var form = document.getElementById("order-form");
  if (!form) return;
  var plan = form.querySelector('input[name="plan_id"]:checked');
  var source = form.querySelector('select[name="source"]');
  var image = source && source.value.indexOf("image:") === 0 ? source.value.slice(6) : "";
  form.querySelectorAll('input[name="license_ids"]').forEach(function (box) {
    var out = box.closest("label").querySelector("[data-plan-price]");
    if (out && plan && box.dataset.planPrices) {
      var prices = JSON.parse(box.dataset.planPrices);
      var text = prices[plan.value];
      if (text && out.textContent !== text) out.textContent = text;
    }
    if (box.dataset.images === undefined) return;
    var required = image !== "" && box.dataset.images.split(" ").indexOf(image) >= 0;
    if (required && !box.dataset.fixed) {
      // First seen, the box is ticked for the image as well: data-ticked says
      // whether the visitor ticked it.
      var was = box.dataset.init ? box.checked : box.dataset.ticked !== undefined;
      box.dataset.was = was ? "1" : "";
      box.checked = true;
      box.disabled = true;
      box.dataset.fixed = "1";
    } else if (!required && box.dataset.fixed) {
      box.checked = box.dataset.was === "1";
      box.disabled = false;
      delete box.dataset.fixed;
    }
    box.dataset.init = "1";
  });
}
document.addEventListener("DOMContentLoaded", berthOrderLicenses);
document.addEventListener("change", function (e) {
  var t = e.target;
  if ((t.name === "plan_id" || t.name === "source") && t.closest("#order-form")) berthOrderLicenses();
});
document.addEventListener("htmx:afterSettle", berthOrderLicenses);
