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
