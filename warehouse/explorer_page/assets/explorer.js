// Progressive: every move and ply is a plain link; this makes a whole row clickable and the arrow keys
// step through the line (left: back a move, right: the most played move).
document.querySelectorAll("tr.move").forEach((row) => {
  row.addEventListener("click", (event) => {
    if (event.target.tagName !== "A") row.querySelector("a").click();
  });
});
document.addEventListener("keydown", (event) => {
  if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
  const plies = document.querySelectorAll("#line a.ply");
  const link = event.key === "ArrowLeft" ? plies[plies.length - 2]
    : event.key === "ArrowRight" ? document.querySelector("tr.move a") : null;
  if (link) link.click();
});
