"""Jinja templates of the GitLab contract replica (plain server-rendered HTML).

Class names, ids, data-testid and data-qa-selector hooks are the ones WebArena's task file and
auto_login read (contract-postmill-gitlab-map.md §2.2, §2.4); the rest is minimal markup.
"""
T = {}
T["base.html"] = """<!DOCTYPE html>
<html lang="en" class="gl-light"><head><meta charset="utf-8">
<title>{% block title %}{{ title }}{% endblock %} · GitLab</title>
<meta name="csrf-param" content="authenticity_token"><meta name="csrf-token" content="{{ csrf }}">
<meta name="description" content="GitLab (sitectl contract replica)">
</head>
<body class="ui-indigo tab-width-8 gl-browser-generic" data-page="{{ page_id }}">
<header class="navbar navbar-gitlab" data-qa-selector="navbar">
 <a class="brand-logo" href="/" title="Homepage"><span class="logo-text">GitLab</span></a>
 <nav class="header-nav">
 {% if cu %}
  <a href="/dashboard/projects" data-qa-selector="projects_dropdown">Projects</a>
  <a href="/dashboard/issues?assignee_username={{ cu.username }}" class="dashboard-shortcuts-issues">Issues</a>
  <a href="/dashboard/merge_requests?assignee_username={{ cu.username }}" class="dashboard-shortcuts-merge_requests">Merge requests</a>
  <a href="/dashboard/todos" class="shortcuts-todos">To-Do List</a>
  <a href="/{{ cu.username }}" class="header-user-dropdown-toggle" data-qa-selector="user_menu" data-user="{{ cu.username }}">@{{ cu.username }}</a>
  <a href="/-/profile" data-qa-selector="edit_profile_link">Edit profile</a>
  <form class="sign-out" action="/users/sign_out" method="post"><input type="hidden" name="authenticity_token" value="{{ csrf }}"><button type="submit" class="sign-out-link" data-qa-selector="sign_out_link" data-testid="sign-out-link">Sign out</button></form>
 {% else %}
  <a href="/explore">Explore</a> <a href="/users/sign_in?redirect_to_referer=yes" class="btn gl-button btn-default">Sign in</a>
 {% endif %}
 </nav>
</header>
<div class="layout-page"><div class="content-wrapper">
<div class="flash-container flash-container-page sticky" data-qa-selector="flash_container">
{% for kind, msg in flashes %}<div class="flash-{{ kind }}" data-testid="{{ kind }}-flash"><span>{{ msg }}</span></div>{% endfor %}
</div>
<main id="content-body" class="content" role="main">
{% block content %}{% endblock %}
</main></div></div>
</body></html>"""

T["sign_in.html"] = """{% extends "base.html" %}{% block content %}
<div class="login-page"><h1>GitLab Community Edition</h1>
<div class="login-box gl-p-5"><div class="login-body">
{% if error %}<div class="flash-alert" data-testid="alert-flash">{{ error }}</div>{% endif %}
<form class="new_user gl-show-field-errors js-sign-in-form" aria-live="assertive" data-testid="sign-in-form" id="new_user" action="/users/sign_in" accept-charset="UTF-8" method="post">
<input type="hidden" name="authenticity_token" value="{{ csrf }}" autocomplete="off">
<div class="form-group"><label for="user_login">Username or email</label>
<input class="form-control gl-form-input top js-username-field" autocomplete="username" autofocus="autofocus" autocapitalize="off" autocorrect="off" required="required" title="This field is required." data-qa-selector="login_field" data-testid="username-field" type="text" value="{{ login }}" name="user[login]" id="user_login"></div>
<div class="form-group"><label for="user_password">Password</label>
<input class="form-control gl-form-input bottom" autocomplete="current-password" required="required" title="This field is required." data-qa-selector="password_field" data-testid="password-field" type="password" name="user[password]" id="user_password"></div>
<div class="gl-form-checkbox custom-control custom-checkbox"><input name="user[remember_me]" type="hidden" value="0" autocomplete="off"><input class="custom-control-input" type="checkbox" value="1" name="user[remember_me]" id="user_remember_me"><label class="custom-control-label" for="user_remember_me">Remember me</label></div>
<button type="submit" class="gl-button btn btn-block btn-md btn-confirm" data-qa-selector="sign_in_button" data-testid="sign-in-button">Sign in</button>
</form></div></div></div>{% endblock %}"""

T["project_list.html"] = """{% extends "base.html" %}{% block content %}
<div class="page-title-holder"><h1 class="page-title gl-font-size-h-display">{{ heading }}</h1></div>
{% if tabs %}<ul class="nav-links">{% for href, label in tabs %}<li><a href="{{ href }}">{{ label }}</a></li>{% endfor %}</ul>{% endif %}
<ul class="projects-list content-list" data-qa-selector="projects_list">
{% for p in projects %}<li class="project-row">
 <div class="project-details"><h2 class="gl-font-base"><a class="project" href="/{{ p.full_path }}"><span class="namespace-name">{{ p.ns_name }} / </span><span class="project-name">{{ p.name }}</span></a>
 <span class="visibility-icon" title="{{ vis_title(p) }}">{{ vis[p.visibility_level] }}</span></h2>
 <div class="description">{{ p.description or '' }}</div></div>
 <div class="controls"><span class="star-count" title="Stars">{{ p.star_count }}</span> <span class="updated">{{ p.last_activity_at }}</span></div>
</li>{% else %}<li class="empty">No projects found</li>{% endfor %}
</ul>{% endblock %}"""

T["profile_edit.html"] = """{% extends "base.html" %}{% block content %}
<h1 class="page-title">Edit Profile</h1>
<form class="edit-user js-edit-user" id="edit_user_{{ cu.id }}" action="/-/profile" method="post">
<input type="hidden" name="_method" value="put"><input type="hidden" name="authenticity_token" value="{{ csrf }}">
<fieldset><legend>Current status</legend>
<input type="text" name="user[status][message]" id="user_status_message" value="{{ ustatus.message or '' }}" data-testid="status-message-field">
<label><input type="checkbox" name="user[status][availability]" value="busy" {% if ustatus.availability == 1 %}checked{% endif %}> Busy</label></fieldset>
<label for="user_name">Full name</label><input type="text" name="user[name]" id="user_name" value="{{ cu.name }}" data-qa-selector="full_name_field">
<label for="user_website_url">Website url</label><input type="text" name="user[website_url]" id="user_website_url" value="{{ cu.website_url }}">
<label for="user_location">Location</label><input type="text" name="user[location]" id="user_location" value="{{ cu.location }}">
<label for="user_bio">Bio</label><textarea name="user[bio]" id="user_bio">{{ cu.bio }}</textarea>
<button type="submit" class="btn btn-confirm" data-qa-selector="update_profile_button">Update profile settings</button>
</form>
<p><a href="/-/profile/personal_access_tokens">Access Tokens</a></p>{% endblock %}"""

T["tokens.html"] = """{% extends "base.html" %}{% block content %}
<h1 class="page-title">Personal Access Tokens</h1>
{% if new_token %}<div class="created-personal-access-token-container"><input type="text" id="created-personal-access-token" data-testid="created-access-token-field" readonly value="{{ new_token }}"></div>{% endif %}
<form id="new_personal_access_token" action="/-/profile/personal_access_tokens" method="post">
<input type="hidden" name="authenticity_token" value="{{ csrf }}">
<input type="text" name="personal_access_token[name]" id="personal_access_token_name" data-testid="access-token-name-field">
<input type="date" name="personal_access_token[expires_at]" id="personal_access_token_expires_at">
{% for s in ['api','read_user','read_api','read_repository','write_repository'] %}<label><input type="checkbox" name="personal_access_token[scopes][]" value="{{ s }}" id="personal_access_token_scopes_{{ s }}"> {{ s }}</label>{% endfor %}
<button type="submit" class="btn btn-confirm" data-testid="create-token-button">Create personal access token</button></form>
<table class="table active-tokens"><tbody>{% for t in tokens %}<tr><td>{{ t.name }}</td><td>{{ t.scopes }}</td><td>{{ t.created_at }}</td></tr>{% endfor %}</tbody></table>
{% endblock %}"""

T["user.html"] = """{% extends "base.html" %}{% block content %}
<div class="user-profile"><div class="cover-block user-cover-block gl-border-t gl-border-b">
<div class="profile-header">
 <div class="avatar-holder"><span class="avatar s96">{{ u.name[:1] }}</span></div>
 <div class="user-info"><h1 class="cover-title gl-my-0" itemprop="name">{{ u.name }}</h1>
 <div class="cover-status">{% if ustatus %}<span class="user-status-emoji">{{ ustatus.emoji }}</span><span>{{ ustatus.message or '' }}</span>{% if ustatus.availability == 1 %}<span class="gl-text-gray-500">Busy</span>{% endif %}{% endif %}</div>
 <p class="gl-text-gray-500">@{{ u.username }} · Member since {{ u.created_at.strftime('%B %d, %Y') }}</p>
 {% if u.location %}<span itemprop="addressLocality">{{ u.location }}</span>{% endif %}
 {% if u.website_url %}<a itemprop="url" href="{{ u.website_url if '://' in u.website_url else 'https://' + u.website_url }}" rel="me nofollow noreferrer noopener" target="_blank">{{ u.website_url }}</a>{% endif %}
 <div class="gl-mt-2">{{ followers }} followers · {{ following }} following</div>
 {% if cu and cu.id != u.id %}<form action="/users/{{ u.username }}/{{ 'unfollow' if is_following else 'follow' }}" method="post"><input type="hidden" name="authenticity_token" value="{{ csrf }}"><button type="submit" class="btn" data-testid="follow-user-link">{{ 'Unfollow' if is_following else 'Follow' }}</button></form>{% endif %}
 </div></div></div>
<ul class="nav-links user-profile-nav"><li><a href="/users/{{ u.username }}/following">Following</a></li><li><a href="/users/{{ u.username }}/starred">Starred projects</a></li></ul>
{% if people is not none %}<ul class="content-list user-list">{% for p in people %}<li class="user-list-item"><a href="/{{ p.username }}">{{ p.name }}</a> <span>@{{ p.username }}</span></li>{% else %}<li>Not following anyone</li>{% endfor %}</ul>{% endif %}
{% if projects is not none %}<ul class="projects-list content-list" data-qa-selector="projects_list">{% for p in projects %}<li class="project-row"><a class="project" href="/{{ p.full_path }}">{{ p.ns_name }} / {{ p.name }}</a> <span class="star-count">{{ p.star_count }}</span></li>{% endfor %}</ul>{% endif %}
</div>{% endblock %}"""

T["group.html"] = """{% extends "base.html" %}{% block content %}
<div class="group-home-panel"><h1 class="home-panel-title">{{ grp.name }}</h1><p>Group ID: {{ grp.id }}</p></div>
<ul class="nav-links"><li><a href="/groups/{{ grp.path }}/-/group_members">Members</a></li></ul>
<ul class="projects-list content-list" data-qa-selector="projects_list">{% for p in projects %}<li class="project-row"><a class="project" href="/{{ p.full_path }}">{{ p.name }}</a></li>{% endfor %}</ul>
{% endblock %}"""

# Members table markup: stacked GlTable cells as the Vue app renders them (§2.4): one
# td[data-label='Account'] with span.gl-avatar-labeled-sublabel "@user", one td.col-max-role with
# exactly one span holding the role name, in the same row order.
T["members.html"] = """{% extends "base.html" %}{% block content %}
<div class="project-members-page"><h1 class="page-title">{{ heading }}</h1>
<p>You can invite a new member to <strong>{{ source_name }}</strong>.</p>
{% if can_admin %}<form class="invite-users-form" id="invite-members-form" action="{{ form_action }}" method="post" data-qa-selector="invite_members_form">
<input type="hidden" name="authenticity_token" value="{{ csrf }}">
<label for="user_ids">Username or user id</label><input type="text" name="user_ids" id="user_ids" data-qa-selector="member_search_field" data-testid="members-token-select-input">
<label for="access_level">Select a role</label><select name="access_level" id="access_level" data-qa-selector="access_level_dropdown">{% for k, v in levels %}<option value="{{ k }}">{{ v }}</option>{% endfor %}</select>
<input type="date" name="expires_at" id="expires_at">
<button type="submit" class="btn btn-confirm" data-qa-selector="invite_button" data-testid="invite-button">Invite</button></form>{% endif %}
<div class="js-project-members-list-app"><table role="table" class="table b-table gl-table members-table b-table-stacked-lg" data-testid="members-table">
<thead role="rowgroup"><tr role="row"><th role="columnheader" class="col-account">Account</th><th role="columnheader" class="col-source">Source</th><th role="columnheader" class="col-max-role">Max role</th><th role="columnheader" class="col-expiration">Expiration</th><th role="columnheader" class="col-actions"></th></tr></thead>
<tbody role="rowgroup">{% for m in members %}<tr role="row" data-qa-selector="member_row" data-testid="members-table-row-{{ m.user_id }}">
<td role="cell" data-label="Account" class="col-account"><div class="gl-avatar-labeled" data-testid="user-avatar"><span class="gl-avatar gl-avatar-circle gl-avatar-s32">{{ m.name[:1] }}</span><div class="gl-avatar-labeled-labels"><a href="/{{ m.username }}" class="gl-avatar-link"><span class="gl-avatar-labeled-label">{{ m.name }}</span></a><span class="gl-avatar-labeled-sublabel">@{{ m.username }}</span></div></div></td>
<td role="cell" data-label="Source" class="col-source"><div>{{ 'Direct member' if m.via == 'direct' or m.via == 'owner' else source_parent }}</div></td>
<td role="cell" data-label="Max role" class="col-max-role"><div><span class="gl-badge badge badge-pill badge-muted">{{ access[m.access_level] }}</span></div></td>
<td role="cell" data-label="Expiration" class="col-expiration"><div>{{ m.expires_at or 'No expiration set' }}</div></td>
<td role="cell" data-label="Actions" class="col-actions"></td></tr>{% endfor %}</tbody></table></div></div>{% endblock %}"""

T["project.html"] = """{% extends "base.html" %}{% block content %}
<nav class="breadcrumbs" aria-label="Breadcrumbs"><a href="/{{ p.ns_path }}">{{ p.ns_name }}</a> / <a href="/{{ p.full_path }}">{{ p.name }}</a></nav>
<ul class="nav-links project-nav">{% for href, label in [('', 'Project information'), ('/-/tree/' ~ (ref or ''), 'Repository'), ('/-/commits/' ~ (ref or ''), 'Commits'), ('/-/issues', 'Issues'), ('/-/merge_requests', 'Merge requests'), ('/-/milestones', 'Milestones'), ('/-/project_members', 'Members'), ('/-/graphs/' ~ (ref or ''), 'Contributors')] %}<li><a href="/{{ p.full_path }}{{ href }}">{{ label }}</a></li>{% endfor %}</ul>
{% block project %}{% endblock %}{% endblock %}"""

T["project_home.html"] = """{% extends "project.html" %}{% block project %}
<div class="project-home-panel js-show-on-project-root gl-my-5">
 <h1 class="home-panel-title gl-font-size-h1 gl-mt-3 gl-mb-2" data-qa-selector="project_name_content" itemprop="name">{{ p.name }}
 <span class="visibility-icon gl-text-secondary has-tooltip" title="{{ vis_title(p) }}" data-container="body">{{ vis[p.visibility_level] }}</span></h1>
 <div class="home-panel-metadata">Project ID: {{ p.id }}</div>
 {% if p.description %}<div class="home-panel-home-desc"><div class="home-panel-description-markdown read-more-container" itemprop="description"><p dir="auto">{{ p.description }}</p></div></div>{% endif %}
 <div class="project-stats"><a href="/{{ p.full_path }}/-/commits/{{ ref }}">{{ ncommits }} Commits</a> · <a href="/{{ p.full_path }}/-/branches">{{ nbranches }} Branches</a> · <span class="star-count">{{ p.star_count }}</span> stars
 {% if cu %}<form action="/{{ p.full_path }}/toggle_star.json" method="post" style="display:inline"><input type="hidden" name="authenticity_token" value="{{ csrf }}"><button type="submit" class="btn star-btn" data-qa-selector="star_button">{{ 'Unstar' if starred else 'Star' }}</button></form>{% endif %}</div>
 <div class="clone-options"><input type="text" id="ssh_project_clone" class="js-select-on-focus" readonly data-qa-selector="ssh_clone_url_content" value="{{ ssh_url }}">
 <input type="text" id="http_project_clone" class="js-select-on-focus" readonly data-qa-selector="http_clone_url_content" value="{{ http_url }}"></div>
</div>
{% include "tree_table.html" %}
{% if readme %}<article class="file-holder readme-holder"><div class="file-title">README.md</div><div class="blob-viewer"><pre class="md">{{ readme }}</pre></div></article>{% endif %}
{% endblock %}"""

T["tree_table.html"] = """{% if tree is none %}<div class="empty-project">The repository for this project is empty</div>{% else %}
<div class="tree-ref-holder">ref: <span class="ref-name">{{ ref }}</span></div>
<table class="table tree-table" id="tree-slider" data-qa-selector="file_tree_table"><tbody>
{% for it in tree %}<tr class="tree-item"><td class="tree-item-file-name"><a class="tree-item-link str-truncated" href="/{{ p.full_path }}/-/{{ 'tree' if it.type == 'tree' else 'blob' }}/{{ ref }}/{{ it.path }}" data-qa-selector="file_name_link"><span>{{ it.name }}</span></a></td></tr>{% endfor %}
</tbody></table>{% endif %}"""

T["tree.html"] = """{% extends "project.html" %}{% block project %}<h2 class="tree-path">{{ path or '/' }}</h2>{% include "tree_table.html" %}{% endblock %}"""

T["blob.html"] = """{% extends "project.html" %}{% block project %}
<div class="file-holder"><div class="js-file-title file-title-flex-parent"><strong class="file-title-name" data-qa-selector="file_name_content">{{ path }}</strong>
<a href="/{{ p.full_path }}/-/raw/{{ ref }}/{{ path }}" class="btn">Open raw</a></div>
<div class="blob-viewer" data-type="simple"><pre class="code highlight"><code>{{ content }}</code></pre></div></div>{% endblock %}"""

T["commits.html"] = """{% extends "project.html" %}{% block project %}
<h2>Commits on {{ ref }}</h2><ul class="content-list commit-list flex-list">
{% for c in commits %}<li class="commit flex-row"><div class="commit-detail"><a class="commit-row-message item-title" href="/{{ p.full_path }}/-/commit/{{ c.id }}">{{ c.title }}</a>
<div class="committer"><a class="commit-author-link" href="mailto:{{ c.author_email }}">{{ c.author_name }}</a> authored <time datetime="{{ c.authored_date }}">{{ c.authored_date }}</time></div></div>
<div class="commit-sha-group"><span class="commit-sha">{{ c.short_id }}</span></div></li>{% endfor %}</ul>{% endblock %}"""

T["graphs.html"] = """{% extends "project.html" %}{% block project %}
<h2>Contributors on {{ ref }}</h2><div class="js-contributors-graph"><table class="table contributors"><tbody>
{% for n, name, email in people %}<tr class="person"><td class="gl-font-weight-bold name">{{ name }}</td><td class="email">{{ email }}</td><td class="commits">{{ n }} commits</td></tr>{% endfor %}
</tbody></table></div>{% endblock %}"""

T["issues.html"] = """{% extends "project.html" %}{% block project %}
<div class="top-area"><ul class="issues-state-filters nav-links">{% for s in ['opened','closed','all'] %}<li class="{{ 'active' if state == s }}"><a href="?state={{ s }}">{{ s|capitalize }}</a></li>{% endfor %}</ul>
{% if cu %}<a class="btn btn-confirm" href="/{{ p.full_path }}/-/{{ kind }}/new" data-qa-selector="new_{{ kind[:-1] }}_button">New {{ noun }}</a>{% endif %}</div>
<ul class="content-list {{ 'issues-list' if kind == 'issues' else 'mr-list' }}" data-qa-selector="{{ kind }}_list">
{% for i in items %}<li class="{{ 'issue' if kind == 'issues' else 'merge-request' }}" id="{{ kind[:-1] }}_{{ i.id }}" data-id="{{ i.id }}">
<div class="issuable-main-info"><span class="issue-title title"><a href="/{{ i.full_path or p.full_path }}/-/{{ kind }}/{{ i.iid }}">{{ i.title }}</a></span>
<div class="issuable-info"><span class="issuable-reference">{{ '#' if kind == 'issues' else '!' }}{{ i.iid }}</span> · opened by <a class="author-link" href="/{{ i.author_username }}">{{ i.author_name }}</a>
{% for l in i.labels %}<span class="gl-label"><span class="gl-label-text">{{ l }}</span></span>{% endfor %}</div></div>
<div class="issuable-meta"><span class="issuable-status">{{ state_name[i.state_id] }}</span> <span class="issuable-updated-at">updated {{ i.updated_at }}</span></div></li>
{% else %}<li class="empty-state">No {{ kind|replace('_', ' ') }} found</li>{% endfor %}</ul>{% endblock %}"""

T["issue.html"] = """{% extends "project.html" %}{% block project %}
<div class="detail-page-header"><div class="issuable-status-box status-box {{ 'status-box-open' if i.state_id == 1 else 'status-box-closed' }}" data-testid="issuable-status-badge">{{ state_name[i.state_id] }}</div>
<span class="issuable-reference">{{ ref_char }}{{ i.iid }}</span> created by <a class="author-link" href="/{{ i.author_username }}">{{ i.author_name }}</a></div>
<div class="issue-details issuable-details"><div class="detail-page-description content-block">
<h1 class="title qa-title" data-qa-selector="title_content" data-testid="issue-title">{{ i.title }}</h1>
{% if mr %}<span class="mr-source-target">Requested to merge</span> <a class="gl-font-monospace" href="/{{ p.full_path }}/-/tree/{{ i.source_branch }}">{{ i.source_branch }}</a> into <a class="gl-font-monospace" href="/{{ p.full_path }}/-/tree/{{ i.target_branch }}">{{ i.target_branch }}</a>{% endif %}
<div class="description"><div class="md">{{ i.description or '' }}</div></div></div></div>
<aside class="right-sidebar js-right-sidebar" aria-label="{{ noun }}"><div class="issuable-sidebar">
<div class="block assignee" data-qa-selector="assignee_block"><div class="title">Assignee{{ 's' if assignees|length > 1 }}</div><div class="value">{% for a in assignees %}<a class="author-link" href="/{{ a.username }}"><span class="author">{{ a.name }}</span> <span class="username">@{{ a.username }}</span></a>{% else %}<span class="no-value">None</span>{% endfor %}</div></div>
{% if mr %}<div class="block reviewer"><div class="title">Reviewer{{ 's' if reviewers|length > 1 }}</div><div class="value">{% for a in reviewers %}<a class="author-link" href="/{{ a.username }}"><span class="author">{{ a.name }}</span> <span class="username">@{{ a.username }}</span></a>{% else %}<span class="no-value">None</span>{% endfor %}</div></div>{% endif %}
<div class="block milestone"><div class="title">Milestone</div><div class="value">{{ milestone.title if milestone else 'None' }}</div></div>
{% if not mr %}<div class="block due_date"><div class="title">Due date</div><div class="value" data-testid="sidebar-due-date"><span class="gl-text-gray-900">{{ i.due_date.strftime('%b %-d, %Y') if i.due_date else 'None' }}</span></div></div>{% endif %}
<div class="block labels"><div class="title">Labels</div><div class="value">{% for l in labels %}<span class="gl-label"><span class="gl-label-text">{{ l }}</span></span>{% else %}None{% endfor %}</div></div>
</div></aside>
<section class="issuable-discussion"><ul id="notes-list" class="notes main-notes-list timeline">
{% for n in notes %}<li id="note_{{ n.id }}" class="note note-wrapper timeline-entry {{ 'system-note' if n.system }}" data-note-id="{{ n.id }}"><div class="timeline-entry-inner"><div class="timeline-content">
<div class="note-header"><a class="author-link" href="/{{ n.username }}"><span class="author">{{ n.name }}</span></a> <span class="note-headline-light">@{{ n.username }} · {{ n.created_at }}</span></div>
<div class="timeline-discussion-body"><div class="note-body"><div class="note-text md">{{ n.note }}</div></div></div></div></div></li>{% endfor %}
</ul>
{% if cu %}<form class="new-note js-new-note-form common-note-form" id="new_note" action="/{{ p.full_path }}/notes" method="post">
<input type="hidden" name="authenticity_token" value="{{ csrf }}"><input type="hidden" name="target_type" value="{{ 'merge_request' if mr else 'issue' }}"><input type="hidden" name="target_id" value="{{ i.id }}">
<textarea name="note[note]" id="note-body" class="note-textarea js-note-text" data-qa-selector="comment_field" data-testid="comment-field" placeholder="Write a comment or drag your files here…"></textarea>
<button type="submit" class="btn btn-confirm js-comment-button" data-qa-selector="comment_button" data-testid="comment-button">Comment</button></form>{% endif %}
</section>{% endblock %}"""

T["issue_new.html"] = """{% extends "project.html" %}{% block project %}
<h1 class="page-title">New {{ noun }}</h1>
{% if error %}<div class="flash-alert">{{ error }}</div>{% endif %}
<form class="{{ 'issue-form' if not mr else 'merge-request-form' }} common-note-form js-quick-submit gfm-form" id="new_{{ obj }}" action="/{{ p.full_path }}/-/{{ kind }}" method="post">
<input type="hidden" name="authenticity_token" value="{{ csrf }}">
{% if mr %}<label for="merge_request_source_branch">Source branch</label><select name="merge_request[source_branch]" id="merge_request_source_branch" data-qa-selector="source_branch_dropdown">{% for b in branch_list %}<option value="{{ b }}" {{ 'selected' if b == src }}>{{ b }}</option>{% endfor %}</select>
<label for="merge_request_target_branch">Target branch</label><select name="merge_request[target_branch]" id="merge_request_target_branch">{% for b in branch_list %}<option value="{{ b }}" {{ 'selected' if b == tgt }}>{{ b }}</option>{% endfor %}</select>
<input type="hidden" name="merge_request[source_project_id]" value="{{ p.id }}"><input type="hidden" name="merge_request[target_project_id]" value="{{ p.id }}">{% endif %}
<label for="{{ obj }}_title">Title (required)</label><input type="text" name="{{ obj }}[title]" id="{{ obj }}_title" class="form-control qa-issuable-form-title" data-qa-selector="issuable_form_title_field" data-testid="issuable-form-title-field" required value="{{ title or '' }}">
<label for="{{ obj }}_description">Description</label><textarea name="{{ obj }}[description]" id="{{ obj }}_description" class="note-textarea js-gfm-input" data-qa-selector="issuable_form_description_field" data-testid="issuable-form-description-field"></textarea>
<label for="{{ obj }}_assignee_ids">Assignee</label><select name="{{ obj }}[assignee_ids][]" id="{{ obj }}_assignee_ids"><option value="0">Unassigned</option>{% for u in users %}<option value="{{ u.id }}">{{ u.name }} (@{{ u.username }})</option>{% endfor %}</select>
{% if mr %}<label for="merge_request_reviewer_ids">Reviewer</label><select name="merge_request[reviewer_ids][]" id="merge_request_reviewer_ids"><option value="0">Unassigned</option>{% for u in users %}<option value="{{ u.id }}">{{ u.name }} (@{{ u.username }})</option>{% endfor %}</select>{% else %}
<label for="issue_due_date">Due date</label><input type="date" name="issue[due_date]" id="issue_due_date">{% endif %}
<button type="submit" class="btn btn-confirm" data-qa-selector="issuable_create_button" data-testid="issuable-create-button">Create {{ noun }}</button></form>{% endblock %}"""

T["milestones.html"] = """{% extends "project.html" %}{% block project %}
<ul class="content-list milestones">{% for m in milestones %}<li class="milestone milestone-{{ m.state }}"><a href="/{{ p.full_path }}/-/milestones/{{ m.iid }}"><strong>{{ m.title }}</strong></a>
<div class="milestone-range">{{ m.start_date or '' }}–{{ m.due_date or '' }}</div></li>{% else %}<li>No milestones</li>{% endfor %}</ul>{% endblock %}"""

T["milestone.html"] = """{% extends "project.html" %}{% block project %}
<div class="detail-page-header milestone-page-header"><h2 class="title">{{ m.title }}</h2></div>
<div class="milestone-sidebar"><div class="block start_date"><div class="title">Start date</div><div class="value">{{ m.start_date.strftime('%b %-d, %Y') if m.start_date else 'No start date' }}</div></div>
<div class="block due_date"><div class="title">Due date</div><div class="value">{{ m.due_date.strftime('%b %-d, %Y') if m.due_date else 'No due date' }}</div></div></div>
<div class="description md">{{ m.description or '' }}</div>{% endblock %}"""

T["dashboard_issues.html"] = """{% extends "base.html" %}{% block content %}
<h1 class="page-title">{{ heading }}</h1><ul class="content-list issues-list">
{% for i in items %}<li class="issue"><a href="/{{ i.full_path }}/-/{{ kind }}/{{ i.iid }}">{{ i.title }}</a> <span class="issuable-reference">{{ i.full_path }}{{ '#' if kind == 'issues' else '!' }}{{ i.iid }}</span></li>{% else %}<li class="empty-state">Nothing here</li>{% endfor %}</ul>{% endblock %}"""

T["todos.html"] = """{% extends "base.html" %}{% block content %}
<h1 class="page-title">To-Do List</h1><ul class="content-list todos-list">
{% for t in todos %}<li class="todo todo-{{ t.state }}"><a href="/{{ t.full_path }}/-/issues/{{ t.iid }}">{{ t.title }}</a></li>{% else %}<li>Your To-Do List shows what to work on next</li>{% endfor %}</ul>{% endblock %}"""

T["new_project.html"] = """{% extends "base.html" %}{% block content %}
<h1 class="page-title">Create blank project</h1>{% if error %}<div class="flash-alert">{{ error }}</div>{% endif %}
<form class="new_project" id="new_project" action="/projects" method="post"><input type="hidden" name="authenticity_token" value="{{ csrf }}">
<label for="project_name">Project name</label><input type="text" name="project[name]" id="project_name" data-qa-selector="project_name" data-testid="project-name">
<label for="project_path">Project slug</label><input type="text" name="project[path]" id="project_path" data-testid="project-path">
<select name="project[namespace_id]" id="project_namespace_id">{% for n in namespaces %}<option value="{{ n.id }}">{{ n.path }}</option>{% endfor %}</select>
{% for k, v in [(0, 'Private'), (10, 'Internal'), (20, 'Public')] %}<label><input type="radio" name="project[visibility_level]" value="{{ k }}" id="project_visibility_level_{{ k }}" {{ 'checked' if k == 0 }}> {{ v }}</label>{% endfor %}
<label><input type="checkbox" name="project[initialize_with_readme]" value="1" checked> Initialize repository with a README</label>
<button type="submit" class="btn btn-confirm" data-qa-selector="project_create_button">Create project</button></form>{% endblock %}"""

T["error.html"] = """{% extends "base.html" %}{% block content %}<div class="error-page"><h1>{{ code }}</h1><h3>{{ message }}</h3></div>{% endblock %}"""
