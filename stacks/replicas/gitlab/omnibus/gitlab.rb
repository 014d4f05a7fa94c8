## GitLab configuration settings (sitectl GitLab contract replica)
## Only the keys below are read by this replica's `gitlab-ctl reconfigure`;
## every other line is accepted and ignored.
external_url 'http://metis.lti.cs.cmu.edu:8023'
# nginx['listen_port'] = 8023
gitlab_rails['gitlab_shell_ssh_port'] = 2222
# gitlab_rails['gitlab_ssh_host'] = 'metis.lti.cs.cmu.edu'
puma['worker_processes'] = 2
