-- Real sign-in: a person is an account at the university's OpenID Connect provider.
ALTER TABLE people ADD COLUMN email text UNIQUE;
ALTER TABLE people ADD COLUMN oidc_subject text UNIQUE;
