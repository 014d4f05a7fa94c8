"""sitectl contract replica of WebArena's webarena-homepage Flask app (webarena-official.md §1.7).

Routes: /, /scratchpad.html, /calculator.html, /password.html. Templates live in
/webarena-homepage/templates/. sitectl's post-start step rewrites index.html in place with
perl; TEMPLATES_AUTO_RELOAD makes Jinja re-check the file's mtime on every render, so the
edited template is served without a restart.
"""
from flask import Flask, render_template

app = Flask(__name__)
app.config["TEMPLATES_AUTO_RELOAD"] = True
app.jinja_env.auto_reload = True


@app.route("/")
def index():
    return render_template("index.html")


@app.route("/scratchpad.html")
def scratchpad():
    return render_template("scratchpad.html")


@app.route("/calculator.html")
def calculator():
    return render_template("calculator.html")


@app.route("/password.html")
def password():
    return render_template("password.html")


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=4399)
