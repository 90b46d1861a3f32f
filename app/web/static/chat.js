const page = document.querySelector("main").dataset.page;
const log = document.getElementById("log");
let conversationId = null;

function add(cls, text) {
  const div = document.createElement("div");
  div.className = "msg " + cls;
  div.textContent = text;
  log.appendChild(div);
  return div;
}

async function api(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify(body)});
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function card(c, into) {
  const div = document.createElement("div");
  div.className = "card";
  div.textContent = "Proposed: " + c.summary + " ";
  for (const decision of ["confirm", "reject"]) {
    const b = document.createElement("button");
    b.textContent = decision === "confirm" ? "Confirm" : "Dismiss";
    b.onclick = async () => {
      try {
        const res = await api(`/api/proposals/${c.proposal_id}/${decision}`, {});
        div.textContent = res.status === "applied" ? "Applied: " + c.summary : "Dismissed.";
      } catch (e) { div.textContent = "Could not " + decision + ": " + e.message; }
    };
    div.appendChild(b);
  }
  into.appendChild(div);
}

function readPhoto(file) {
  return new Promise((ok, fail) => {
    const fr = new FileReader();
    fr.onload = () => ok({name: file.name, data: fr.result});
    fr.onerror = () => fail(fr.error);
    fr.readAsDataURL(file);
  });
}

const role = document.getElementById("role");
role.onchange = async (e) => {
  await api("/api/session", {role: e.target.value || null});
  conversationId = null;
  add("tool", "Signed in as " + (e.target.value || "nobody") + "; new conversation.");
};

document.getElementById("sign-out").onclick = async () => {
  await api("/auth/logout", {});
  location.reload();
};

fetch("/api/me").then(r => r.json()).then(d => {
  // The demo sign-in (DEMO_SIGNIN=1) picks a role; real sign-in goes to the university.
  if (d.demo_signin) {
    document.getElementById("demo").classList.remove("hidden");
    if (d.signed_in) role.value = d.signed_in.role;
  } else if (d.signed_in) {
    document.getElementById("person").textContent = d.signed_in.name + " (" + d.signed_in.role + ")";
    document.getElementById("signed-in").classList.remove("hidden");
  } else if (d.sign_in) {
    document.getElementById("sign-in").classList.remove("hidden");
  }
});

document.getElementById("ask").onsubmit = async (e) => {
  e.preventDefault();
  const text = document.getElementById("message").value.trim();
  const file = document.getElementById("photo").files[0];
  if (!text) return;
  add("user", text + (file ? "  [photo: " + file.name + "]" : ""));
  document.getElementById("message").value = "";
  const body = {message: text, page: {path: page}, stream: true, conversation_id: conversationId};
  if (file) { body.photos = [await readPhoto(file)]; document.getElementById("photo").value = ""; }
  const r = await fetch("/api/chat", {method: "POST", headers: {"Content-Type": "application/json"},
                                      body: JSON.stringify(body)});
  if (!r.ok) { const d = await r.json(); add("error", d.error || r.statusText); return; }
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buf += dec.decode(value, {stream: true});
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const ev = JSON.parse(buf.slice(0, nl)); buf = buf.slice(nl + 1);
      if (ev.type === "tool_call") add("tool", "→ " + ev.name + " " + JSON.stringify(ev.arguments));
      else if (ev.type === "error") add("error", ev.error);
      else if (ev.type === "turn") {
        conversationId = ev.conversation_id;
        const div = add("assistant", ev.answer);
        for (const c of ev.cards) card(c, div);
      }
    }
  }
};
